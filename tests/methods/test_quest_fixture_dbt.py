"""QUEST-LOFT on a release-format QUEST-style dataset written here (rag/quest at 128k in a tmp
data root): corpus-in-context, justified QA (plain and with the QUEST instruction) and justified
QA with verification, against the 127.0.0.1 fixture; answers are the titles of the documents a
justified answer cites, and two questions of seed 002's Appendix E get the revised-gold set
metrics (hand-computed below), DEBATABLE answers removed from both sides."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from loft_warehouse.inference.fixture_server import FixtureServer, FixtureState
from tests import docs_commands
from tests.conftest import query, run_dbt
from tests.inference.support import openai_system, write_systems

pytestmark = pytest.mark.slow
METHODS = ["cic", "justified", "justified_quest", "justified_verify", "rag_top5_verify", "rag_top5_justified_verify"]
BOSTON = "Novels about families set in Boston and New England."
FINNISH = "Finnish television and animated films"
BIRDS = "Birds described in 1837"
# Per question: the titles a justified answer names, and those verification judges TRUE.
SCRIPT = {
    BOSTON: (["The Scarlet Letter", "A Case of Need", "Moby-Dick"], {"The Scarlet Letter", "A Case of Need"}),
    FINNISH: (["Moomins and the Comet Chase", "Quest for a Heart"], {"Moomins and the Comet Chase"}),
    BIRDS: (["Spotted owlet"], {"Spotted owlet"}),
}
CORPUS = [
    ("The Scarlet Letter", "An 1850 novel by Nathaniel Hawthorne set in Puritan Boston."),
    ("A Case of Need", "A 1968 medical thriller by Michael Crichton set in Boston."),
    ("Little Women", "A novel by Louisa May Alcott about four sisters in Concord, Massachusetts."),
    ("Moby-Dick", "An 1851 novel by Herman Melville about a whaling voyage from Nantucket."),
    ("Moomins and the Comet Chase", "A 2010 Finnish animated film about the Moomins."),
    ("Santa Claus and the Magic Drum", "A 1996 Finnish animated Christmas film."),
    ("Quest for a Heart", "A 2007 Finnish-Irish animated film based on a Moomin story."),
    ("Spotted owlet", "A small owl of tropical Asia, described by Temminck in 1821."),
    ("Rufous treepie", "A treepie of the crow family found in South Asia, described in 1790."),
    ("Great Expectations", "A novel by Charles Dickens set in Kent and London."),
    ("The Wind-Up Bird Chronicle", "A novel by Haruki Murakami set in Tokyo."),
    ("Frozen", "A 2013 American animated musical film by Walt Disney Animation Studios."),
]
QUERIES = {
    "few_shot": [("fs-0", "Novels by Charles Dickens", ["Great Expectations"])],
    "dev": [("dev-0", "Japanese novels set in Tokyo", ["The Wind-Up Bird Chronicle"])],
    "test": [
        ("boston", BOSTON, ["The Scarlet Letter", "A Case of Need", "Little Women"]),
        ("finnish", FINNISH, ["Moomins and the Comet Chase", "Santa Claus and the Magic Drum", "Quest for a Heart"]),
        ("birds", BIRDS, ["Spotted owlet"]),
    ],
}
DOCUMENT = re.compile(r"^ID: (\S+) \| TITLE: ([^|]*) \|", re.MULTILINE)


def write_release(root: Path, shared_data: Path) -> Path:
    """A data root holding rag/quest at 128k in the LOFT release format, and the tokenizers."""
    folder = root / "loft" / "rag" / "quest" / "128k"
    folder.mkdir(parents=True)
    pid = {title: f"quest-{i}" for i, (title, _) in enumerate(CORPUS)}
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as handle:
        for title, text in CORPUS:
            handle.write(json.dumps({"pid": pid[title], "title_text": title, "passage_text": text}) + "\n")
    for split, rows in QUERIES.items():
        with open(folder / f"{split}_queries.jsonl", "w", encoding="utf-8") as handle:
            for qid, question, answers in rows:
                qrels = [[pid[a], 1] for a in answers]
                record = {"qid": qid, "query_text": question, "answers": answers, "metadata": {"qrels": qrels}}
                handle.write(json.dumps(record) + "\n")
    (root / "tokenizers").symlink_to(shared_data / "tokenizers")
    return root


def answer(prompt: str) -> str:
    """The scripted model: for the question asked last in the prompt, the scripted titles."""
    question = max(SCRIPT, key=prompt.rfind)
    named, true = SCRIPT[question]
    if "Your task is to judge whether a given candidate answer" in prompt:
        candidate = prompt.rpartition("===== Candidate Answer =====\n")[2].strip()
        verdict = "TRUE" if candidate in true else "FALSE"
        return json.dumps(
            {"candidate_answer": candidate, "evidence_for": [], "evidence_against": [], "reasoning": "-",
             "final_judgment": verdict}
        )  # fmt: skip
    if "Your task is to answer a given question based on the provided documents" in prompt:
        ids = {title.strip(): doc_id for doc_id, title in DOCUMENT.findall(prompt)}
        named = [title for title in named if title in ids]  # of the documents shown (bm25's top k)
        candidates = [
            {"candidate_answer": title, "evidence_for": [{"doc_id": ids[title], "text": "..."}],
             "evidence_against": [], "reasoning": "-", "final_judgment": "TRUE"}
            for title in named
        ]  # fmt: skip
        return json.dumps(
            {"question": question, "candidate_answers": candidates, "answer": ["a paraphrase"] * len(named),
             "answer_doc_ids": [ids[title] for title in named]}
        )  # fmt: skip
    return "Final Answer: " + json.dumps(named[:1])


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    root = tmp_path_factory.mktemp("quest")
    data = write_release(root / "data", shared_data)
    database = root / "loft.duckdb"
    write_systems(root / "systems.yaml", [openai_system("gpt-fixture", context_window=1_000_000)])
    with FixtureServer(FixtureState(answer=answer)) as server:
        result = _build(database, data, server.url)
        (root / "fixture_url").write_text(server.url, encoding="utf-8")
    assert result.returncode == 0, result.stdout[-5000:]
    return database


def _build(database: Path, data: Path, url: str, **extra: str) -> subprocess.CompletedProcess[str]:
    """loft_128k of rag/quest with every method, answered by the fixture at `url`."""
    root = database.parent
    env = {
        "LOFT_DATA_DIR": str(data),
        "LOFT_SYSTEMS_FILE": str(root / "systems.yaml"),
        "LOFT_SYSTEMS": "gpt-fixture",
        "LOFT_RESPONSE_STORE": str(root / "store.sqlite"),
        "LOFT_TEST_OPENAI_KEY": "sk-test",
        "LOFT_TEST_OPENAI_BASE_URL": f"{url}/v1",
        **extra,
    }
    variables = json.dumps({"datasets": "rag/quest", "methods": METHODS})
    return run_dbt(["build", "--select", "loft_128k", "--vars", variables], database, env)


def _revised(database: Path) -> dict[tuple[str, str, str], float]:
    rows = query(
        database,
        "select method, qid, metric, value from loft_128k.scores where rule = 'revised' and system = 'gpt-fixture'",
    )
    return {(method, qid, metric): value for method, qid, metric, value in rows}


def test_the_docs_revised_gold_query_lists_every_method(built: Path) -> None:
    """docs/methods-and-studies.md's query: each method's set F1 on the revised gold, as metrics
    averages the rows of scores."""
    rows = query(built, docs_commands.sql("revised-gold"))
    means = query(
        built,
        "select method, gold_version, count(*), avg(value) from loft_128k.scores where rule = 'revised' "
        "and metric = 'set_f1' and split = 'test' and system = 'gpt-fixture' group by all order by all",
    )
    assert rows == [(method, version, n, pytest.approx(mean)) for method, version, n, mean in means]
    assert {method for method, *_ in rows} == set(METHODS)


def test_justified_answers_are_the_titles_of_the_documents_cited(built: Path) -> None:
    rows = query(
        built,
        "select method, qid, answer_strict from loft_128k.predictions "
        "where is_final and split = 'test' and method in ('justified', 'justified_quest') order by all",
    )
    expected = [(method, qid, SCRIPT[question][0]) for method in ("justified", "justified_quest")
                for qid, question in (("birds", BIRDS), ("boston", BOSTON), ("finnish", FINNISH))]  # fmt: skip
    assert rows == expected


def test_verification_keeps_the_candidates_judged_true(built: Path) -> None:
    rows = query(
        built,
        "select qid, flatten(list(answer_strict order by call_index)) from loft_128k.predictions "
        "where method = 'justified_verify' and is_final and split = 'test' group by qid order by qid",
    )
    assert rows == [
        ("birds", ["Spotted owlet"]),
        ("boston", ["The Scarlet Letter", "A Case of Need"]),
        ("finnish", ["Moomins and the Comet Chase"]),
    ]
    calls = query(
        built,
        "select qid, count(*) from loft_128k_internal.int_stage2_prompts where method = 'justified_verify' "
        "and split = 'test' group by qid order by qid",
    )
    assert calls == [("birds", 1), ("boston", 3), ("finnish", 2)]


def test_rag_verification_keeps_the_retrieved_entities_judged_true(built: Path) -> None:
    """RAG + Verification: bm25's top 5, one verification per retrieved title; the answer is
    the titles the (scripted) verifier judges TRUE, in rank order."""
    retrieved = _top5(built, "rag_top5_verify")
    assert len(retrieved) == 3 and all(len(titles) == 5 for titles in retrieved.values())
    assert _final(built, "rag_top5_verify") == {
        qid: [t for t in titles if t in SCRIPT[QUESTIONS[qid]][1]] for qid, titles in retrieved.items()
    }
    [cell] = query(
        built,
        "select n, mean, reason from loft_128k.quest_loft_methods where paper_table = 3 "
        "and paper_method = 'RAG + Verification' and paper_column = 'F1'",
    )
    assert cell[0] == 2 and cell[2] is None  # boston and finnish are revised


def _top5(built: Path, method: str) -> dict[str, list[str]]:
    """Per test question, the titles of bm25's top 5 for a rag_top5 method, in rank order."""
    rows = query(
        built,
        "select r.qid, list(c.title order by i) from loft_128k.stage_retrieval as r, "
        "unnest(r.retrieved_pids) with ordinality as t(pid, i) "
        "inner join loft_128k.corpus as c on c.pid = t.pid and c.dataset = r.dataset "
        f"where r.method = '{method}' and r.stage = 1 and r.split = 'test' group by r.qid",
    )
    return dict(rows)


def _final(built: Path, method: str) -> dict[str, list[str]]:
    rows = query(
        built,
        "select qid, flatten(list(answer_strict order by call_index)) from loft_128k.predictions "
        f"where method = '{method}' and is_final and split = 'test' group by qid",
    )
    return dict(rows)


QUESTIONS = {"birds": BIRDS, "boston": BOSTON, "finnish": FINNISH}


def test_rag_justified_verification_runs_three_stages(built: Path) -> None:
    """bm25's top 5, justified QA naming the scripted titles among them, then a verification
    per candidate: the answer is the named titles the verifier judges TRUE."""
    top5 = _top5(built, "rag_top5_justified_verify")
    stages = query(
        built,
        "select stage, count(*) from loft_128k.responses where method = 'rag_top5_justified_verify' "
        "and split = 'test' group by stage order by stage",
    )
    assert [stage for stage, _ in stages] == [1, 2, 3] and stages[1][1] == 3
    expected = {}
    for qid, titles in top5.items():
        named, true = SCRIPT[QUESTIONS[qid]]
        expected[qid] = [t for t in named if t in titles and t in true]
    assert _final(built, "rag_top5_justified_verify") == expected
    [cell] = query(
        built,
        "select n, reason from loft_128k.quest_loft_methods where paper_table = 3 "
        "and paper_method = 'RAG Justified QA + Verification' and paper_column = 'F1'",
    )
    assert cell == (2, None)


def test_revised_gold_scores_by_hand(built: Path) -> None:
    scores = _revised(built)
    # boston, justified: named {Scarlet Letter, A Case of Need (DEBATABLE, dropped), Moby-Dick}
    # against revised gold {Scarlet Letter}: precision 1/2, recall 1, F1 2/3.
    assert scores[("justified", "boston", "set_precision")] == pytest.approx(0.5)
    assert scores[("justified", "boston", "set_recall")] == 1.0
    assert scores[("justified", "boston", "set_f1")] == pytest.approx(2 / 3)
    assert scores[("justified", "boston", "set_accuracy")] == 0.0
    # verified: {Scarlet Letter, A Case of Need} -> {Scarlet Letter} = gold.
    assert scores[("justified_verify", "boston", "set_accuracy")] == 1.0
    # finnish: Quest for a Heart is NO_MATCH in the revised gold {Moomins..., Santa Claus...}.
    assert scores[("justified", "finnish", "set_precision")] == 0.5
    assert scores[("justified", "finnish", "set_recall")] == 0.5
    assert scores[("justified_verify", "finnish", "set_precision")] == 1.0
    assert scores[("justified_verify", "finnish", "subspan_em")] == 0.0
    # corpus-in-context answered "The Scarlet Letter" alone: every revised metric 1 for boston.
    assert {m: v for (method, qid, m), v in scores.items() if (method, qid) == ("cic", "boston")} == {
        "set_precision": 1.0, "set_recall": 1.0, "set_f1": 1.0, "set_accuracy": 1.0, "subspan_em": 1.0
    }  # fmt: skip
    # a question the appendix does not revise gets no revised rows.
    assert not [key for key in scores if key[1] == "birds"]


def test_metrics_compare_the_methods_on_original_and_revised_gold(built: Path) -> None:
    rows = query(
        built,
        "select method, rule, n, mean from loft_128k.metrics where system = 'gpt-fixture' and split = 'test' "
        "and metric = 'set_f1' order by method, rule",
    )
    by = {(method, rule): (n, mean) for method, rule, n, mean in rows}
    assert {method for method, _ in by} == set(METHODS)
    # revised: boston and finnish only; justified_verify: F1 1 and 2/3.
    assert by[("justified_verify", "revised")] == (2, pytest.approx((1 + 2 / 3) / 2))
    assert by[("justified", "loft")][0] == 3


def test_retrieval_evaluation_of_the_entities_each_stage_names(built: Path) -> None:
    """QUEST-LOFT Table 6 by hand on the revised gold (boston {Scarlet Letter}; finnish {Moomins,
    Santa Claus}): cic names one title per question, justified cites boston's gold first and one
    of finnish's two; the corpus's first 3 documents hold boston's gold, all 12 hold both."""
    rows = query(
        built,
        "select paper_method, method, paper_column, n, mean from loft_128k.quest_loft_retrieval "
        "where paper_table = 6 and paper_column in ('MRecall@3', 'Recall@20') and n > 0",
    )
    by = {(paper_method, method, column): (n, mean) for paper_method, method, column, n, mean in rows}
    runs = [("CiC Baseline", "cic"), ("CiC Justified", "justified"), ("CiC Justified", "justified_verify"),
            ("CiC Justified - QUEST", "justified_quest")]  # fmt: skip
    for paper_method, method in runs:
        assert by[(paper_method, method, "MRecall@3")] == (2, 0.5)
        assert by[(paper_method, method, "Recall@20")] == (2, 0.75)
    naive = "Naive retrieval (first K docs in corpus)"
    assert (by[(naive, "naive", "MRecall@3")], by[(naive, "naive", "Recall@20")]) == ((2, 0.5), (2, 1.0))
    # bm25's top 5 of the three-stage and verification methods fill the retriever's row
    assert {m for p, m, _ in by if p == "Embedding-based retrieval"} == {"rag_top5_verify", "rag_top5_justified_verify"}


def test_a_new_gold_version_rescores_the_stored_answers_without_a_call(built: Path, tmp_path: Path) -> None:
    """A team's adjudication file (qid-keyed: birds judged again, boston's A Case of Need now a
    MATCH) gives a second gold version beside quest_loft_revised: same stored answers, no call."""
    folder = tmp_path / "adjudications"
    folder.mkdir()
    (folder / "team.csv").write_text(
        "gold_version,task,dataset,qid,answer,rating,source\n"
        "team_v2,rag,quest,birds,Rufous treepie,MATCH,second reader\n"
        "team_v2,rag,quest,boston,The Scarlet Letter,MATCH,second reader\n"
        "team_v2,rag,quest,boston,A Case of Need,MATCH,second reader\n",
        encoding="utf-8",
    )
    database = built.parent / "rescored.duckdb"
    shutil.copy(built, database)
    state = FixtureState(answer=answer)
    url = (built.parent / "fixture_url").read_text(encoding="utf-8")
    with FixtureServer(state, port=int(url.rpartition(":")[2])) as server:  # the endpoint is in each request key
        result = _build(database, built.parent / "data", server.url, LOFT_ADJUDICATIONS_DIR=str(folder))
    assert result.returncode == 0, result.stdout[-5000:]
    assert state.generation_requests() == []
    rows = query(
        database,
        "select gold_version, qid, value from loft_128k.scores where rule = 'revised' and method = 'justified' "
        "and metric = 'set_precision' order by all",
    )
    # justified named {Scarlet Letter, A Case of Need, Moby-Dick} for boston and Spotted owlet for birds
    assert rows == [
        ("quest_loft_revised", "boston", 0.5),
        ("quest_loft_revised", "finnish", 0.5),
        ("team_v2", "birds", 0.0),
        ("team_v2", "boston", pytest.approx(2 / 3)),
    ]
    assert query(database, "select count(*) from loft_128k.responses") == query(
        built, "select count(*) from loft_128k.responses"
    )
    versions = query(database, "select distinct gold_version from loft_128k.metrics where rule = 'revised' order by 1")
    assert versions == [("quest_loft_revised",), ("team_v2",)]
