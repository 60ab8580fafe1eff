"""The bm25 baseline ranks the shown documents and answers in the Final Answer form."""

from __future__ import annotations

import polars as pl

from loft_warehouse.inference import runner
from loft_warehouse.inference.systems import load_systems
from tests.inference.support import prompt_row, write_systems

CORPUS = pl.DataFrame(
    {
        "task": ["retrieval"] * 4,
        "dataset": ["nq"] * 4,
        "corpus_id": ["nq"] * 4,
        "pid": ["p-cat", "p-dog", "p-sea", "p-sun"],
        "title": ["Felidae", "Dogs", "", None],
        "text": [
            "cats are small felines that purr",
            "dogs bark and fetch sticks",
            "the ocean is deep and salty",
            "the sun is a star that shines",
        ],
    }
)
# Shown IDs are the prompt's own numbering, not corpus order.
DOC_IDS = pl.DataFrame(
    {
        "task": ["retrieval"] * 4,
        "dataset": ["nq"] * 4,
        "corpus_id": ["nq"] * 4,
        "variant": ["default"] * 4,
        "shown_id": ["3", "0", "2", "1"],
        "pid": ["p-cat", "p-dog", "p-sea", "p-sun"],
    }
)
QUERIES = pl.DataFrame(
    {
        "task": ["retrieval", "retrieval", "rag"],
        "dataset": ["nq", "nq", "nq"],
        "corpus_id": ["nq", "nq", "nq"],
        "qid": ["q1", "q2", "q1"],
        "turn": [0, 0, 0],
        "query_text": ["which animal can purr", "where is salty water deep", "x"],
    }
)


def _prompt(qid: str, task: str = "retrieval") -> dict:
    row = prompt_row("px", qid, f"query {qid}\n", task=task, dataset="nq", corpus_id="nq")
    return {**row, "prompt_id": f"{task}/nq/nq/default/{qid}/0"}


def test_bm25_answers_with_the_top_shown_ids(tmp_path, store):
    path = write_systems(
        tmp_path / "s.yaml",
        [{"name": "bm25", "provider": "bm25", "tasks": ["retrieval"], "options": {"top_k": 2}}],
    )
    systems = list(load_systems(path).values())
    prompts = pl.DataFrame([_prompt("q1"), _prompt("q2"), _prompt("q1", task="rag")])
    run_inputs = runner.RunInputs(prompts, {"px": "corpus\n"}, CORPUS, DOC_IDS, QUERIES)
    frame = runner.run(run_inputs, systems, store, "128k", {}, emit=lambda line: None)
    assert frame["prompt_id"].to_list() == [
        "retrieval/nq/nq/default/q1/0",
        "retrieval/nq/nq/default/q2/0",
    ]
    answers = frame["raw_text"].to_list()
    assert answers[0].startswith("Final Answer: ['3', ")
    assert answers[1].startswith("Final Answer: ['2', ")
    assert frame["status"].to_list() == ["ok", "ok"]
    assert frame["cost_usd"].to_list() == [0.0, 0.0]
    assert store.count() == 2


def test_bm25_indexes_title_and_text(tmp_path, store):
    from loft_warehouse.inference.providers.bm25 import BM25Provider

    system = load_systems(
        write_systems(tmp_path / "s.yaml", [{"name": "b", "provider": "bm25", "options": {"top_k": 1}}])
    )["b"]
    queries = QUERIES.with_columns(pl.lit("felidae").alias("query_text"))
    provider = BM25Provider(system, CORPUS, DOC_IDS, queries)
    assert provider.rank(_prompt("q1")) == ["3"]


def test_a_multimodal_corpus_beside_the_text_ones_is_not_bm25s(tmp_path):
    """prompt_doc_ids holds an mm dataset's shown IDs too; its media are in no text corpus."""
    from loft_warehouse.inference.providers.bm25 import BM25Provider

    system = load_systems(
        write_systems(tmp_path / "s.yaml", [{"name": "b", "provider": "bm25", "options": {"top_k": 1}}])
    )["b"]
    images = pl.DataFrame(
        {"task": ["mm"], "dataset": ["oven"], "corpus_id": ["oven"], "variant": ["default"], "shown_id": ["0"],
         "pid": ["oven-000"]}
    )  # fmt: skip
    queries = QUERIES.with_columns(pl.lit("felidae").alias("query_text"))
    provider = BM25Provider(system, CORPUS, pl.concat([DOC_IDS, images]), queries)
    assert provider.rank(_prompt("q1")) == ["3"]


def _top_1_on_quest(tmp_path, corpus: pl.DataFrame, doc_ids: pl.DataFrame, query_text: str):
    """A top-1 bm25 provider over a rag/quest corpus `q`, asked `query_text` for its query q1."""
    from loft_warehouse.inference.providers.bm25 import BM25Provider

    queries = pl.DataFrame(
        {"task": ["rag"], "dataset": ["quest"], "corpus_id": ["q"], "qid": ["q1"], "turn": [0],
         "query_text": [query_text]}
    )  # fmt: skip
    system = load_systems(
        write_systems(tmp_path / "s.yaml", [{"name": "b", "provider": "bm25", "options": {"top_k": 1}}])
    )["b"]
    return BM25Provider(system, corpus, doc_ids, queries)


def test_bm25_ranks_a_merged_page_by_all_its_passages(tmp_path):
    """merged_pages shows page Cats under its first passage's pid: bm25 reads both passages."""
    corpus = pl.DataFrame(
        {
            "task": ["rag"] * 4,
            "dataset": ["quest"] * 4,
            "corpus_id": ["q"] * 4,
            "doc_id": [0, 1, 2, 3],
            "pid": ["cat-1", "dog-1", "cat-2", "sea-1"],
            "title": ["Cats", "Dogs", "Cats", "Sea"],
            "text": ["small felines", "dogs bark", "they purr loudly", "salty water"],
        }
    )
    doc_ids = pl.DataFrame(
        {
            "task": ["rag"] * 7,
            "dataset": ["quest"] * 7,
            "corpus_id": ["q"] * 7,
            "variant": ["default"] * 4 + ["merged_pages"] * 3,
            "shown_id": ["0", "1", "2", "3", "0", "1", "2"],
            "pid": ["cat-1", "dog-1", "cat-2", "sea-1", "cat-1", "dog-1", "sea-1"],
        }
    )
    provider = _top_1_on_quest(tmp_path, corpus, doc_ids, "purr")
    row = prompt_row("px", "q1", "purr\n", task="rag", dataset="quest", corpus_id="q")
    assert provider.rank({**row, "variant": "default", "prompt_id": "default/q1"}) == ["2"]
    assert provider.rank({**row, "variant": "merged_pages", "prompt_id": "merged/q1"}) == ["0"]


def test_untitled_passages_stay_pages_of_their_own_when_merged(tmp_path):
    """As prompts.variants.merged_pages: a passage with no title is its own page, never merged
    with the other untitled ones."""
    corpus = pl.DataFrame(
        {"task": ["rag"] * 3, "dataset": ["quest"] * 3, "corpus_id": ["q"] * 3, "doc_id": [0, 1, 2],
         "pid": ["u1", "u2", "t1"], "title": ["", "", "T"], "text": ["cats purr", "dogs bark", "fish swim"]}
    )  # fmt: skip
    doc_ids = pl.DataFrame(
        {"task": ["rag"] * 3, "dataset": ["quest"] * 3, "corpus_id": ["q"] * 3, "variant": ["merged_pages"] * 3,
         "shown_id": ["0", "1", "2"], "pid": ["u1", "u2", "t1"]}
    )  # fmt: skip
    provider = _top_1_on_quest(tmp_path, corpus, doc_ids, "bark")
    row = prompt_row("px", "q1", "bark\n", task="rag", dataset="quest", corpus_id="q")
    assert provider.rank({**row, "variant": "merged_pages", "prompt_id": "merged/q1"}) == ["1"]
