"""The multimodal prompts as prompt-table rows: the marked prefix and suffix give back the parts
in order, the text tokens exclude the markers, the gold is the shown IDs, and the shown-ID map is
the corpus order."""

from __future__ import annotations

import json
from pathlib import Path

from loft_warehouse import media_tables
from loft_warehouse.prompts import media_markers, multimodal_rows
from tests import mm_release


def test_rows_carry_the_parts_in_order_and_the_gold_as_shown(tmp_path: Path) -> None:
    built = media_tables.build(mm_release.write_release(tmp_path, datasets=("oven", "fleurs_en_stt")), "32k")
    counted: list[str] = []

    def count(texts: list[str]) -> list[int]:
        counted.extend(texts)
        return [len(t.split()) for t in texts]

    tables = multimodal_rows.tables(built.prompt_parts, built.queries, built.corpus, count)
    assert sorted(tables.prefixes["dataset"]) == ["fleurs_en_stt", "oven"]
    assert not any("loft-media" in text for text in counted)
    oven = tables.prompts.filter(dataset="oven", qid="test-3").row(0, named=True)
    prefix = tables.prefixes.filter(prefix_id=oven["prefix_id"])["text"][0]
    oven_parts = built.prompt_parts.filter(dataset="oven")
    shown = oven_parts.filter((oven_parts["section"] == "prefix") | (oven_parts["qid"] == "test-3"))
    expected = [
        p["text"] if p["mime_type"] == "text/plain" else media_markers.marker(p["mime_type"], p["media_sha256"])
        for p in shown.sort("section", "part_index").iter_rows(named=True)
    ]
    assert prefix + oven["suffix"] == "".join(expected)
    assert any(p.startswith("<<loft-media image/jpeg") for p in expected)
    assert oven["prompt_id"] == "mm/oven/oven/default/test-3/0"
    assert (oven["task"], oven["variant"], oven["method"], oven["stage"], oven["n_turns"]) == (
        "mm",
        "default",
        "cic",
        1,
        1,
    )
    assert json.loads(oven["gold_shown_ids"]) == ["3"] and json.loads(oven["gold"]) == ["oven-003"]
    assert oven["targets"] == oven["gold_shown_ids"] and oven["n_documents"] == 6
    assert oven["n_tokens_total"] == oven["n_tokens_prefix"] + len(media_markers.text_only(oven["suffix"]).split())
    stt = tables.prompts.filter(dataset="fleurs_en_stt", qid="dev-2")["suffix"][0]
    assert [ref.mime_type for ref in media_markers.media_of(stt)] == ["audio/wav"]
    assert tables.doc_ids.filter(dataset="oven").sort("position")["shown_id"].to_list() == [str(i) for i in range(6)]
