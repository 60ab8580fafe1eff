"""The prompt tables: one prefix per (dataset, variant), suffix-only rows, exact token counts."""

from __future__ import annotations

import hashlib
import json

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from loft_warehouse.design import Design, parse_list
from loft_warehouse.prompts.store import (
    PartCounts,
    PromptTokens,
    build,
    prefix_id,
    prompt_text,
)
from loft_warehouse.prompts.variants import resolve


@pytest.fixture
def tables(corpus, queries, datasets, tokens):
    variants = resolve(["default", "query_at_beginning", "alphanumeric_ids", "context_2k"])
    return build(corpus, queries, datasets, Design(variants=tuple(variants)), tokens, seed=1)


def test_one_prefix_per_dataset_and_variant(tables):
    keys = tables.prefixes.select("dataset", "variant").sort("dataset", "variant").rows()
    assert keys == [
        ("arguana", "alphanumeric_ids"),
        ("arguana", "default"),
        ("arguana", "query_at_beginning"),
        ("bbh_web", "context_2k"),
        ("bbh_web", "default"),
        ("hotpotqa", "alphanumeric_ids"),
        ("hotpotqa", "default"),
        ("hotpotqa", "query_at_beginning"),
        ("nq", "alphanumeric_ids"),
        ("nq", "default"),
        ("nq", "query_at_beginning"),
        ("topiocqa", "alphanumeric_ids"),
        ("topiocqa", "default"),
        ("topiocqa", "query_at_beginning"),
    ]
    assert tables.prefixes["prefix_id"].n_unique() == 14
    row = tables.prefixes.filter(dataset="hotpotqa", variant="default").row(0, named=True)
    assert row["prefix_id"] == prefix_id("retrieval", "hotpotqa", "hotpotqa", "default", row["text"])
    assert row["content_hash"] == hashlib.sha256(row["text"].encode()).hexdigest()
    assert row["n_chars"] == len(row["text"])
    same_text = tables.prefixes.filter(dataset="hotpotqa", variant="query_at_beginning").row(0, named=True)
    assert same_text["text"] == row["text"] and same_text["content_hash"] == row["content_hash"]
    assert same_text["prefix_id"] != row["prefix_id"]


def test_rows_hold_suffixes_and_gold(tables):
    prompts = tables.prompts.filter(variant="alphanumeric_ids").sort("prompt_id")
    assert prompts["prompt_id"].to_list() == [
        "rag/nq/nq/alphanumeric_ids/nq-t1/0",
        "retrieval/arguana/arguana/alphanumeric_ids/aq-d1/0",
        "retrieval/hotpotqa/hotpotqa/alphanumeric_ids/hq-t1/0",
        "retrieval/topiocqa/topiocqa/alphanumeric_ids/tq-1/0",
        "retrieval/topiocqa/topiocqa/alphanumeric_ids/tq-1/1",
    ]
    hotpot = prompts.filter(dataset="hotpotqa").row(0, named=True)
    assert (hotpot["gold"], hotpot["gold_shown_ids"], hotpot["targets"]) == (
        '["h-song"]',
        '["D5f2"]',
        '["D5f2"]',
    )
    nq = prompts.filter(dataset="nq").row(0, named=True)
    rome = tables.doc_ids.filter(dataset="nq", variant="alphanumeric_ids", pid="n-1")
    assert json.loads(nq["gold_shown_ids"]) == rome["shown_id"].to_list()
    assert nq["targets"] == nq["gold"] == '["Rome"]'
    icl = tables.prompts.filter(dataset="bbh_web", variant="default").row(0, named=True)
    assert (icl["targets"], icl["gold_shown_ids"], icl["split"]) == ('["Yes"]', "[]", "dev")
    assert tables.prompts.filter(variant="default")["head"].to_list() == [""] * 6
    assert all(tables.prompts.filter(variant="query_at_beginning")["head"].str.contains("(query|claim): "))


def test_doc_ids_map_shown_ids_to_pids_per_variant(tables):
    doc_ids = tables.doc_ids.filter(dataset="hotpotqa").sort("variant", "position")
    assert doc_ids.filter(variant="default").select("position", "shown_id", "pid").rows() == [
        (0, "0", "h-okazaki"),
        (1, "1", "h-song"),
        (2, "2", "h-award"),
        (3, "3", "h-lodger"),
    ]
    assert doc_ids.filter(variant="alphanumeric_ids")["shown_id"].to_list() == [
        "y5S5",
        "D5f2",
        "T3t1",
        "I8k1",
    ]
    assert tables.doc_ids.filter(dataset="bbh_web").height == 0


def test_token_counts_equal_counting_the_whole_prompt(tables, tokens):
    full = tables.prompts.join(
        tables.prefixes.select("prefix_id", "text", pl.col("n_tokens").alias("prefix_tokens")),
        on="prefix_id",
    )
    assert full.height == tables.prompts.height == 17
    for row in full.iter_rows(named=True):
        text = prompt_text(row["head"], row["text"], row["suffix"])
        assert row["n_tokens_total"] == tokens.count([text])[0], row["prompt_id"]
        assert row["n_tokens_prefix"] == row["prefix_tokens"] == tokens.count([row["text"]])[0]


def test_continuation_counts_are_exact_after_a_newline(tokens):
    counts = PromptTokens(tokens)
    prefix = "ID: 0 | TITLE: x | END ID: 0\n"
    for suffix in ["====== Now let's start! ======\nquery: a b\n", " leading space\n", "\n\nx"]:
        assert counts.count([prefix])[0] + counts.continuation([suffix])[0] == tokens.count([prefix + suffix])[0]
    with pytest.raises(ValueError, match="must end in a newline"):
        PartCounts(counts).total(["no newline", "x"])


def test_list_settings_as_dbt_renders_them():
    assert parse_list(None, "prompt_variants") is None
    assert parse_list(["default", "no_cot"], "prompt_variants") == ["default", "no_cot"]
    assert parse_list("['default', 'no_cot']", "prompt_variants") == ["default", "no_cot"]
    assert parse_list("default, gold_pos_test_p0", "prompt_variants") == ["default", "gold_pos_test_p0"]
    assert parse_list("all", "prompt_variants") == ["all"]
    assert parse_list("[10, 20]", "litm_documents") == [10, 20]


def test_line_counting_agrees_with_whole_text_counting(tokens, corpus, queries, datasets):
    by_line = PromptTokens(tokens)
    whole = PromptTokens(tokens)
    whole.by_line = False
    assert by_line.by_line is True
    texts = [
        render_text
        for variant in resolve(["default", "no_id_echo", "query_at_beginning"])
        for render_text in build(corpus, queries, datasets, Design(variants=(variant,)), tokens, 1).prefixes["text"]
    ]
    texts += ["a  b \n\n   c\t\n", "x", "", "é\u00a0ü\n"]
    assert by_line.count(texts) == whole.count(texts)
    assert by_line.continuation(texts) == whole.continuation(texts)


def test_built_tables_are_kept_across_processes_until_an_input_changes(
    tokens, corpus, queries, datasets, tmp_path, monkeypatch
):
    from loft_warehouse import frame_cache, settings
    from loft_warehouse.prompts import store
    from tests.spies import spy

    monkeypatch.setenv("LOFT_CACHE_DIR", str(tmp_path))
    model = str(settings.tokenizer_model())
    design = Design(variants=tuple(resolve(["default", "no_cot"])))
    monkeypatch.setattr(store, "_BUILT", frame_cache.SharedInProcess(keep=1))
    first = store.built(corpus, queries, datasets, design, model, None, 1)
    monkeypatch.setattr(
        store, "_BUILT", frame_cache.SharedInProcess(keep=1)
    )  # a new process: the memo is empty, the files are not
    rendered = store.build
    monkeypatch.setattr(store, "build", lambda *args: pytest.fail("rendered again with unchanged inputs"))
    kept = store.built(corpus.reverse(), queries, datasets, design, model, None, "1")
    for name in store.PROMPT_FRAMES:
        assert_frame_equal(getattr(kept, name), getattr(first, name))

    monkeypatch.setattr(store, "build", rendered)
    builds = spy(monkeypatch, store, "build")
    edited = corpus.with_columns(pl.col("text").str.replace("^", "Edited. "))
    store.built(edited, queries, datasets, design, model, None, 1)
    store.built(corpus, queries, datasets, Design(variants=tuple(resolve(["default"]))), model, None, 1)
    store.built(corpus, queries, datasets, design, model, None, 2)
    assert len(builds) == 3


def test_cuts_at_line_starts_count_as_the_cut_text(tokens, corpus, queries, datasets):
    texts = list(build(corpus, queries, datasets, Design(), tokens, 1).prefixes["text"])
    texts += ["x\n\n  y\nz\n", "one line\n", "a\nb", "é\u00a0ü\n\nZ"]
    counts = PartCounts(PromptTokens(tokens))
    assert counts.counts.by_line
    newline = tokens.count(["\n"])[0]
    for text in texts:
        cuts = [0, len(text), *(i + 1 for i, c in enumerate(text) if c == "\n")][:60]
        cuts += [1, len(text) // 2]  # inside a line: counted as the cut text
        for cut in cuts:
            part = text[:cut]
            assert counts.start_upto(text, cut) == (tokens.count([part])[0] if part else 0), (text[:40], cut)
            expected = tokens.count(["\n" + part])[0] - newline if part else 0
            assert counts.continuation_upto(text, cut) == expected, (text[:40], cut)
