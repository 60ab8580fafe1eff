"""BBH loader: every example is a shot and a query that excludes itself from the shots."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest

from loft_warehouse.errors import BadInputError, ConfigurationError
from loft_warehouse.sources import bbh

BBH_DATASETS = ("bbh_date", "bbh_salient", "bbh_tracking7", "bbh_web")


@pytest.mark.parametrize("dataset", BBH_DATASETS)
def test_real_counts(data_root, spec_of, dataset):
    spec = spec_of("icl", dataset)
    data = bbh.load(spec, data_root)
    assert len(data.documents) == len(data.queries) == 250
    assert [d.pid for d in data.documents] == [f"{spec.source_name}-{i}" for i in range(250)]
    assert [q.qid for q in data.queries] == [d.pid for d in data.documents]
    assert all(q.relevant_pids == [q.qid] and q.gold_pids == [[]] for q in data.queries)
    assert all(q.gold == [d.answer.split(" ")] for q, d in zip(data.queries, data.documents, strict=True))


def test_real_web_of_lies_examples(data_root, spec_of):
    data = bbh.load(spec_of("icl", "bbh_web"), data_root)
    assert Counter(d.label for d in data.documents) == {"No": 128, "Yes": 122}
    first = data.queries[0]
    assert first.turns[0].startswith("Question: Sherrie tells the truth.")
    assert first.gold == [["No"]]
    assert (data.documents[0].source_row, data.documents[249].source_row) == (1, 250)


def test_real_date_classes(data_root, spec_of):
    data = bbh.load(spec_of("icl", "bbh_date"), data_root)
    assert Counter(d.label for d in data.documents) == {
        "(B)": 50,
        "(A)": 48,
        "(D)": 43,
        "(E)": 40,
        "(C)": 35,
        "(F)": 34,
    }
    assert data.queries[0].gold == [["(B)"]]


def test_multi_word_target_splits_on_spaces(raw, spec_of):
    raw.json("raw/bbh/tiny.json", {"examples": [{"input": " 2 + 2? ", "target": "four or 4"}]})
    spec = replace(spec_of("icl", "bbh_web"), source_name="tiny")
    data = bbh.load(spec, raw.root)
    assert (data.documents[0].text, data.documents[0].answer) == ("2 + 2?", "four or 4")
    assert data.queries[0].gold == [["four", "or", "4"]]
    assert data.queries[0].qid == "tiny-0"


def test_malformed_json_names_file_and_line(raw, spec_of):
    path = raw.lines("raw/bbh/tiny.json", ['{"examples": [', '{"input": "x", "target": }', "]}"])
    with pytest.raises(BadInputError, match=rf"{path}:2: malformed JSON"):
        bbh.load(replace(spec_of("icl", "bbh_web"), source_name="tiny"), raw.root)


def test_example_without_target_names_example(raw, spec_of):
    path = raw.json("raw/bbh/tiny.json", {"examples": [{"input": "a", "target": "b"}, {"input": "c"}]})
    with pytest.raises(BadInputError, match=rf"{path}:2: missing field\(s\) target"):
        bbh.load(replace(spec_of("icl", "bbh_web"), source_name="tiny"), raw.root)


def test_missing_examples_list_is_bad_input(raw, spec_of):
    path = raw.json("raw/bbh/tiny.json", [{"input": "a", "target": "b"}])
    with pytest.raises(BadInputError, match=rf"{path}: expected an object"):
        bbh.load(replace(spec_of("icl", "bbh_web"), source_name="tiny"), raw.root)


def test_source_name_is_required(raw, spec_of):
    with pytest.raises(ConfigurationError, match="needs source_name"):
        bbh.load(replace(spec_of("icl", "bbh_web"), source_name=None), raw.root)
