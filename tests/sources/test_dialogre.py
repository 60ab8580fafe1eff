"""DialogRE (LIB-dialogue) loader: one example per entity pair, checked against LongICLBench."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from loft_warehouse.errors import BadInputError
from loft_warehouse.sources import dialogre

DIALOGRE = "raw/dialogre/en"


def _pair(x, y, *labels):
    return {
        "x": x,
        "y": y,
        "rid": [0],
        "r": list(labels),
        "t": [""],
        "x_type": "PER",
        "y_type": "PER",
    }


def _tree(raw, test=None):
    raw.json(
        f"{DIALOGRE}/train.json",
        [
            [
                ["Speaker 1: Hi Mom.", "Speaker 2: Hi!"],
                [
                    _pair("Speaker 2", "Speaker 1", "per:children"),
                    _pair("Speaker 1", "Mom", "unanswerable"),
                ],
            ]
        ],
    )
    raw.json(f"{DIALOGRE}/dev.json", [[["A: x"], [_pair("A", "B", "per:friends", "per:roommate")]]])
    raw.json(
        f"{DIALOGRE}/test.json",
        test or [[["Speaker 1: Yo."], [_pair("S1", "S2", "per:boss"), _pair("S1", "S2", "per:friends")]]],
    )


def test_framing_on_a_hand_made_tree(raw, spec_of):
    _tree(raw)
    data = dialogre.load(spec_of("icl", "lib_dialogue"), raw.root)
    assert [(d.pid, d.answer, d.label, d.source_row) for d in data.documents] == [
        ("dialogre-train-0-0", "per:children", "per:children", 1),
        ("dialogre-dev-0-0", "per:friends per:roommate", "per:friends", 1),
    ]
    assert data.documents[0].text == (
        "Dialogue:\nSpeaker 1: Hi Mom.\nSpeaker 2: Hi!\nSubject: Speaker 2\nObject: Speaker 1\n"
        "Which relation does the subject have to the object?"
    )
    # The pair annotated twice in one test dialogue is one query accepting both relations.
    [query] = data.queries
    assert (query.qid, query.gold, query.gold_pids, query.relevant_pids) == (
        "dialogre-test-0-0",
        [["per:boss", "per:friends"]],
        [[]],
        [],
    )
    assert query.metadata == {"subject": "S1", "object": "S2"}


def test_real_counts(data_root, spec_of):
    data = dialogre.load(spec_of("icl", "lib_dialogue"), data_root)
    # Answerable pairs: train 4,699 + dev 1,519 shots; test 1,471 minus one pair listed twice.
    assert len(data.documents) == 6218
    assert len(data.queries) == 1470
    assert len({d.pid for d in data.documents}) == 6218
    # 274 train + 74 dev pairs carry several relations; 52 test pairs + the merged one.
    assert sum(" " in d.answer for d in data.documents) == 348
    assert sum(len(q.gold[0]) > 1 for q in data.queries) == 53
    classes = {d.label for d in data.documents}
    assert len(classes) == 36
    assert "unanswerable" not in classes
    assert {"per:place_of_birth", "gpe:births_in_place"} <= classes
    assert {g for q in data.queries for g in q.gold[0]} <= classes
    first = data.documents[0]
    assert (first.pid, first.label) == ("dialogre-train-0-0", "per:alternate_names")
    assert first.text.endswith(
        "\nSubject: Speaker 2\nObject: Chandler Bing\nWhich relation does the subject have to the object?"
    )


def test_real_queries_match_longiclbench_test_set(data_root, spec_of):
    data = dialogre.load(spec_of("icl", "lib_dialogue"), data_root)
    ours: dict[int, dict[tuple[str, str], list[str]]] = defaultdict(dict)
    for query in data.queries:
        key = (query.metadata["subject"], query.metadata["object"])
        ours[query.source_row][key] = query.gold[0]
    lib = json.loads((data_root / "raw/longiclbench/test_dialogueRE.json").read_text("utf-8"))
    assert len(lib) == 357
    for row, item in enumerate(lib, start=1):
        pairs = {(r["subject_entity"], r["object_entity"]) for r in item["relations"]}
        assert set(ours[row]) == pairs
        assert all(r["relation"] in ours[row][r["subject_entity"], r["object_entity"]] for r in item["relations"])
    dialogue = next(q.turns[0] for q in data.queries if q.source_row == 1)
    assert dialogue.startswith("Dialogue:\n" + lib[0]["dialogue"] + "\nSubject: ")


def test_real_load_is_deterministic(data_root, spec_of):
    spec = spec_of("icl", "lib_dialogue")
    first, second = dialogre.load(spec, data_root), dialogre.load(spec, data_root)
    assert [(d.pid, d.answer) for d in first.documents] == [(d.pid, d.answer) for d in second.documents]
    assert [q.qid for q in first.queries] == [q.qid for q in second.queries]


def test_malformed_json_names_file_and_line(raw, spec_of):
    _tree(raw)
    path = raw.lines(f"{DIALOGRE}/dev.json", ["[", "[[], [}]", "]"])
    with pytest.raises(BadInputError, match=rf"{path}:2: malformed JSON"):
        dialogre.load(spec_of("icl", "lib_dialogue"), raw.root)


@pytest.mark.parametrize(
    ("dialogue", "message"),
    [
        ([["S1: a"]], r"dialogue must be \[utterances, relations\]"),
        ([["S1: a"], [{"x": "S1", "r": ["per:boss"]}]], "relation entry needs x, y and r"),
        ([["S1: a"], [_pair("S1", "S2")]], "r must be a non-empty list"),
        ([["S1: a"], [_pair("S1", "S2", "per boss")]], "relation labels must not contain spaces"),
        ([["S1: a", 3], [_pair("S1", "S2", "per:boss")]], "utterance must be a non-empty string"),
        ([[], [_pair("S1", "S2", "per:boss")]], "dialogue has no utterances"),
    ],
)
def test_bad_dialogue_names_file_and_dialogue(raw, spec_of, dialogue, message):
    _tree(raw, test=[[["S1: ok"], [_pair("S1", "S2", "per:boss")]], dialogue])
    path = raw.root / DIALOGRE / "test.json"
    with pytest.raises(BadInputError, match=rf"{path}:2: {message}"):
        dialogre.load(spec_of("icl", "lib_dialogue"), raw.root)
