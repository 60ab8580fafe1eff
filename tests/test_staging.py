"""stage_size on a tmp data root: one hand-made released dataset and one raw BBH-format task."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from loft_warehouse import frame_cache, registry, settings, staging
from loft_warehouse.errors import BadInputError, ConfigurationError
from loft_warehouse.registry import DatasetSpec
from loft_warehouse.sources.base import Document

SEED = 7
TINY_BBH = DatasetSpec(
    task="icl",
    dataset="bbh_tiny",
    source="bbh",
    source_name="tiny",
    sizes=("128k",),
    no_test_at=(),
    splits={"few_shot": 0, "dev": 1, "test": 2},
)
BBH_EXAMPLES = [
    {"input": "Is the sky blue?", "target": "Yes"},
    {"input": "Is fire cold?", "target": "No"},
    {"input": "Is ice cold?", "target": "Yes"},
    {"input": "Is snow hot?", "target": "No"},
    {"input": "Is rain wet?", "target": "Yes"},
    {"input": "Is sand wet?", "target": "No"},
]


@pytest.fixture(scope="module")
def tokenizer() -> Path:
    try:
        return settings.tokenizer_model()
    except ConfigurationError:
        pytest.skip("shared tokenizer not available")


def _jsonl(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    release = tmp_path / "loft" / "retrieval" / "tiny" / "128k"
    _jsonl(
        release / "corpus.jsonl",
        [
            {"pid": "d1", "title_text": " Cats ", "passage_text": "Cats purr. ", "metadata": {}},
            {"pid": "d2", "title_text": "", "passage_text": "Dogs bark.", "metadata": {}},
            {"pid": "d3", "title_text": "Fish", "passage_text": "Fish swim.", "metadata": {}},
        ],
    )
    _jsonl(
        release / "few_shot_queries.jsonl",
        [{"qid": "f1", "query_text": "what purrs?", "answers": [["d1", 1]], "metadata": {}}],
    )
    _jsonl(
        release / "dev_queries.jsonl",
        [{"qid": "v1", "query_text": " what barks? ", "answers": [["d2", 1]], "metadata": {}}],
    )
    _jsonl(
        release / "test_queries.jsonl",
        [
            {
                "qid": "t1",
                "query_text": "swims, barks?",
                "answers": [["d3", 1], ["d2", 1]],
                "metadata": {},
            }
        ],
    )
    bbh = tmp_path / "raw" / "bbh" / "tiny.json"
    bbh.parent.mkdir(parents=True)
    bbh.write_text(json.dumps({"examples": BBH_EXAMPLES}), encoding="utf-8")
    monkeypatch.setattr(registry, "specs", lambda: (TINY_BBH,))
    return tmp_path


def test_datasets_frame(root, tokenizer):
    staged = staging.stage_size(root, "128k", tokenizer, SEED)
    common = {
        "has_title": True,
        "max_gold": None,
        "size_tokens": 128_000,
        "budget": 115_200,
        "contexts": ["128k"],
        "context_budgets": [115_200],
        "per_query_corpus": False,
        "is_multi_answer": False,
        "tokenizer": "mistral_tokenizer.model.v1",
        "seed": SEED,
    }
    assert staged.datasets.to_dicts() == [
        {
            "task": "retrieval",
            "dataset": "tiny",
            "source": "loft_release",
            "is_released": True,
            "n_few_shot": 5,
            "n_dev": 10,
            "n_test": 100,
            "n_test_largest": 100,
            **common,
        },
        {
            "task": "icl",
            "dataset": "bbh_tiny",
            "source": "bbh",
            "is_released": False,
            "n_few_shot": 0,
            "n_dev": 1,
            "n_test": 2,
            "n_test_largest": 2,
            **common,
        },
    ]


def test_released_documents_keep_file_order(root, tokenizer):
    docs = staging.stage_size(root, "128k", tokenizer, SEED).documents
    assert docs.schema == pl.Schema(staging.DOCUMENT_SCHEMA)
    tiny = docs.filter(pl.col("dataset") == "tiny")
    # Token counts of "Cats | Cats purr." (▁C ats ▁| ▁C ats ▁pur r .), "Dogs bark."
    # (▁Dog s ▁bark .) and "Fish | Fish swim." (▁Fish ▁| ▁Fish ▁swim .).
    assert tiny.select("corpus_id", "pid", "title", "text", "n_tokens", "pool_rank").rows() == [
        ("tiny", "d1", "Cats", "Cats purr.", 8, 0),
        ("tiny", "d2", "", "Dogs bark.", 4, 1),
        ("tiny", "d3", "Fish", "Fish swim.", 5, 2),
    ]
    assert tiny["is_released"].to_list() == [True] * 3
    assert tiny["source_row"].to_list() == [1, 2, 3]
    assert tiny["answer"].null_count() == tiny["label"].null_count() == 3


def test_released_queries_keep_split_order(root, tokenizer):
    queries = staging.stage_size(root, "128k", tokenizer, SEED).queries
    assert queries.schema == pl.Schema(staging.QUERY_SCHEMA)
    tiny = queries.filter(pl.col("dataset") == "tiny")
    assert tiny.select(
        "qid", "query_text", "gold", "gold_pids", "relevant_pids", "release_split", "query_rank"
    ).rows() == [
        ("f1", "what purrs?", '["d1"]', ["d1"], ["d1"], "few_shot", 0),
        ("v1", "what barks?", '["d2"]', ["d2"], ["d2"], "dev", 1),
        ("t1", "swims, barks?", '["d3", "d2"]', ["d3", "d2"], ["d2", "d3"], "test", 2),
    ]
    assert tiny.select("turn", "n_turns").unique().rows() == [(0, 1)]


def test_raw_icl_documents_and_queries(root, tokenizer):
    staged = staging.stage_size(root, "128k", tokenizer, SEED)
    docs = staged.documents.filter(pl.col("dataset") == "bbh_tiny")
    queries = staged.queries.filter(pl.col("dataset") == "bbh_tiny")
    assert docs["pid"].to_list() == [f"tiny-{i}" for i in range(6)]
    assert docs["answer"].to_list() == docs["label"].to_list() == ["Yes", "No"] * 3
    # "Is the sky blue?\nOutput: ['Yes']": ▁Is ▁the ▁sky ▁blue ? <0x0A> Output : ▁[' Yes '].
    assert docs["n_tokens"][0] == 11
    # "Is fire cold?\nOutput: ['No']": ▁Is ▁fire ▁cold ? <0x0A> Output : ▁[' No '].
    assert docs["n_tokens"][1] == 10
    assert sorted(docs["pool_rank"].to_list()) == list(range(6))
    assert sorted(queries["query_rank"].to_list()) == list(range(6))
    assert queries["relevant_pids"].to_list() == [[f"tiny-{i}"] for i in range(6)]
    assert queries["gold"].to_list() == ['["Yes"]', '["No"]'] * 3
    assert queries["gold_pids"].to_list() == [[]] * 6
    assert docs["corpus_id"].unique().to_list() == ["bbh_tiny"]
    assert not docs["is_released"].any()


def test_ranks_depend_only_on_seed(root, tokenizer):
    def ranks(seed: int) -> tuple[list[int], list[int]]:
        staged = staging.stage_size(root, "128k", tokenizer, seed)
        pick = pl.col("dataset") == "bbh_tiny"
        return (
            staged.documents.filter(pick)["pool_rank"].to_list(),
            staged.queries.filter(pick)["query_rank"].to_list(),
        )

    assert ranks(SEED) == ranks(SEED)
    assert ranks(SEED) != ranks(SEED + 1)


def test_dangling_gold_names_query_file_and_line(root, tokenizer):
    path = root / "loft" / "retrieval" / "tiny" / "128k" / "dev_queries.jsonl"
    _jsonl(path, [{"qid": "v1", "query_text": "q", "answers": [["d9", 1]], "metadata": {}}])
    with pytest.raises(BadInputError, match=rf"{path}:1: query 'v1' .* points at pid 'd9'"):
        staging.stage_size(root, "128k", tokenizer, SEED)


def test_a_text_over_the_byte_budget_names_its_file_and_line(root, tokenizer, monkeypatch):
    """Issue 60 item 2: a 50 MiB passage was tokenized and shown in every prompt (3.3 GiB)."""
    monkeypatch.setenv("LOFT_MAX_TEXT_BYTES", "40")
    path = root / "loft" / "retrieval" / "tiny" / "128k" / "corpus.jsonl"
    _jsonl(
        path,
        [
            {"pid": "d1", "title_text": "", "passage_text": "é" * 20, "metadata": {}},  # 40 bytes: within
            {"pid": "d2", "title_text": "", "passage_text": "é" * 21, "metadata": {}},
            {"pid": "d3", "title_text": "", "passage_text": "c", "metadata": {}},
        ],
    )
    with pytest.raises(BadInputError, match=rf"{path}:2: pid 'd2' of retrieval/tiny: a text of 42 bytes, over"):
        staging.stage_size(root, "128k", tokenizer, SEED)
    queries = root / "loft" / "retrieval" / "tiny" / "128k" / "dev_queries.jsonl"
    _jsonl(path, [{"pid": f"d{i}", "title_text": "", "passage_text": "ok", "metadata": {}} for i in (1, 2, 3)])
    _jsonl(queries, [{"qid": "v1", "query_text": "🙂" * 11, "answers": [["d2", 1]], "metadata": {}}])
    with pytest.raises(BadInputError, match=rf"{queries}:1: qid 'v1' of retrieval/tiny: a text of 44 bytes"):
        staging.stage_size(root, "128k", tokenizer, SEED)


def test_duplicate_pid_names_both_rows(root, tokenizer):
    path = root / "loft" / "retrieval" / "tiny" / "128k" / "corpus.jsonl"
    _jsonl(
        path,
        [
            {"pid": "d1", "title_text": "", "passage_text": "a", "metadata": {}},
            {"pid": "d2", "title_text": "", "passage_text": "b", "metadata": {}},
            {"pid": "d3", "title_text": "", "passage_text": "c", "metadata": {}},
            {"pid": "d2", "title_text": "", "passage_text": "d", "metadata": {}},
        ],
    )
    with pytest.raises(BadInputError, match=rf"{path}:4: duplicate pid 'd2' .*first at {path}:2"):
        staging.stage_size(root, "128k", tokenizer, SEED)


def test_sized_text_is_what_the_corpus_line_shows():
    doc = Document(pid="p", text="body", source_file="f", source_row=1, title="T", answer="A")
    assert staging.sized_text("retrieval", doc) == "T | body"
    assert staging.sized_text("rag", Document(pid="p", text="body", source_file="f", source_row=1)) == "body"
    assert staging.sized_text("icl", doc) == "body\nOutput: ['A']"
    assert staging.sized_text("sql", doc) == "Table: T\nbody"


def test_draw_ranks_is_a_seeded_permutation():
    ranks = staging.draw_ranks(20, SEED, "k")
    assert sorted(ranks.tolist()) == list(range(20))
    assert ranks.tolist() == staging.draw_ranks(20, SEED, "k").tolist()
    assert ranks.tolist() != staging.draw_ranks(20, SEED, "other").tolist()
    assert ranks.tolist() != staging.draw_ranks(20, SEED + 1, "k").tolist()


def test_staged_memoises_per_setting(root, tokenizer):
    first = staging.staged(str(root), "128k", str(tokenizer), str(SEED))
    assert staging.staged(str(root), "128k", str(tokenizer), SEED) is first
    assert first.documents.height == 9


def test_staged_frames_are_reused_across_processes_until_an_input_changes(
    root, tokenizer, tmp_path_factory, monkeypatch, capsys
):
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("LOFT_CACHE_DIR", str(cache))
    monkeypatch.setattr(staging, "_STAGED", frame_cache.SharedInProcess())
    first = staging.staged(str(root), "128k", str(tokenizer), SEED)
    monkeypatch.setattr(
        staging, "_STAGED", frame_cache.SharedInProcess()
    )  # a new process: the memo is empty, the files are not
    monkeypatch.setattr(staging, "stage_size", lambda *args: pytest.fail("staged again with unchanged inputs"))
    reused = staging.staged(str(root), "128k", str(tokenizer), SEED)
    assert "reused the frames of unchanged inputs" in capsys.readouterr().out
    for name in ("datasets", "documents", "queries"):
        assert_frame_equal(getattr(reused, name), getattr(first, name))

    monkeypatch.undo()
    monkeypatch.setenv("LOFT_CACHE_DIR", str(cache))
    monkeypatch.setattr(registry, "specs", lambda: (TINY_BBH,))
    monkeypatch.setattr(staging, "_STAGED", frame_cache.SharedInProcess())
    corpus = root / "loft" / "retrieval" / "tiny" / "128k" / "corpus.jsonl"
    corpus.write_text(corpus.read_text(encoding="utf-8").replace("Dogs bark.", "Dogs howl."), encoding="utf-8")
    changed = staging.staged(str(root), "128k", str(tokenizer), SEED)
    assert "Dogs howl." in changed.documents["text"].to_list()


def test_documents_land_in_chunks_in_file_order(root, tokenizer, monkeypatch):
    whole = staging.stage_size(root, "128k", tokenizer, SEED).documents
    monkeypatch.setattr(staging, "LANDING_CHUNK", 2)
    chunked = staging.stage_size(root, "128k", tokenizer, SEED).documents
    assert_frame_equal(chunked, whole)
    assert whole.filter(pl.col("dataset") == "tiny")["pid"].to_list() == ["d1", "d2", "d3"]
