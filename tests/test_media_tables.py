"""A size's multimodal tables: media as BLOBs of the bytes sent, the corpus and queries with their
shown IDs, prompts as ordered parts that put LOFT's prompt back together, and the cost estimate
with media tokens; through dbt, at two sizes, with a bad media file named in one line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from loft_warehouse import media_tables
from loft_warehouse.prompts.multimodal import render
from loft_warehouse.sources import loft_mm
from tests import mm_release
from tests.conftest import query, run_dbt

HERE = Path(__file__).resolve().parent
RECORDED = HERE / "differential" / "mm_prompts"
MODELS = ("stg_mm_media", "stg_mm_corpus", "stg_mm_queries", "mm_prompt_parts", "mm_cost_estimates")


def _release(root: Path) -> Path:
    mm_release.write_release(root)
    mm_release.write_release(root, size="128k", n_docs=8)
    return root


def test_tables_hold_every_dataset_and_parts_rebuild_the_prompt(tmp_path: Path) -> None:
    tables = media_tables.build(_release(tmp_path), "32k")
    assert sorted(set(tables.media["dataset"])) == sorted(mm_release.DATASETS)
    assert all(hashlib.sha256(row["data"]).hexdigest() == row["sha256"] for row in tables.media.iter_rows(named=True))
    flickr = tables.corpus.filter(dataset="flickr30k")
    assert flickr["shown_id"].to_list() == [str(i) for i in range(6)]
    assert tables.queries.filter(dataset="oven", qid="test-3")["gold_shown_ids"].to_list() == [["3"]]
    parts = tables.prompt_parts.filter(dataset="msrvtt")
    prefix = parts.filter(section="prefix").sort("part_index")
    suffix = parts.filter(section="suffix", qid="test-4").sort("part_index")
    data = loft_mm.load(tmp_path / "loft" / "mm" / "msrvtt" / "32k")
    prompt = render("msrvtt", data.source, data.media)
    row = next(r for r in prompt.rows if r.qid == "test-4")
    assert [(p["mime_type"], p["text"], p["media_sha256"]) for p in [*prefix.to_dicts(), *suffix.to_dicts()]] == [
        (p.mime_type, p.text, p.media_sha256) for p in prompt.prefix + row.suffix
    ]


def test_a_selection_takes_the_mm_datasets_it_names(tmp_path: Path) -> None:
    root = _release(tmp_path)
    assert media_tables.selected_datasets(root, "32k", ("mm/oven", "retrieval/nq")) == ["mm/oven"]
    assert len(media_tables.selected_datasets(root, "32k", ("mm/*",))) == len(mm_release.DATASETS)
    assert media_tables.selected_datasets(root, "32k", ("retrieval/nq",)) == []
    assert media_tables.build(root / "nothing", "32k").media.height == 0


def test_an_unchanged_release_is_not_decoded_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _release(tmp_path / "data")
    monkeypatch.setenv("LOFT_CACHE_DIR", str(tmp_path / "cache"))
    first = media_tables.built(str(root), "32k")
    calls = []
    monkeypatch.setattr(media_tables, "_BUILT", type(media_tables._BUILT)())  # a new build process
    monkeypatch.setattr(media_tables, "build", lambda *args: calls.append(args) or first)
    again = media_tables.built(str(root), "32k")
    assert calls == [] and again.media.equals(first.media) and again.prompt_parts.equals(first.prompt_parts)
    image = root / "loft" / "mm" / "oven" / "32k" / "resources" / "oven-000.png"
    image.write_bytes(mm_release.image_bytes(7))
    monkeypatch.setattr(media_tables, "_BUILT", type(media_tables._BUILT)())
    media_tables.built(str(root), "32k")
    assert len(calls) == 1  # a changed media file is read again


def _select(size: str) -> list[str]:
    return [f"loft_{size}__{name}" for name in MODELS]


@pytest.mark.slow
def test_dbt_lands_media_at_two_sizes_and_names_a_bad_file(tmp_path: Path, shared_data: Path) -> None:
    root = _release(tmp_path / "data")
    (root / "tokenizers").symlink_to(shared_data / "tokenizers")
    database = tmp_path / "loft.duckdb"
    env = {"LOFT_DATA_DIR": str(root)}
    result = run_dbt(["build", "--select", *_select("32k"), *_select("128k")], database, env)
    assert result.returncode == 0, result.stdout[-5000:]
    media = query(database, "select sha256, data, byte_size from loft_128k_internal.stg_mm_media")
    assert media and all(hashlib.sha256(data).hexdigest() == sha and len(data) == n for sha, data, n in media)
    outside = query(
        database,
        "select s.dataset, s.pid from loft_32k_internal.stg_mm_corpus s "
        "anti join loft_128k_internal.stg_mm_corpus l using (dataset, pid, media)",
    )
    assert outside == []
    # The prompt of one query, put together from its parts, is LOFT's (recorded by record_mm_prompts.py).
    parts = query(
        database,
        "select mime_type, text, media_sha256 from loft_32k.mm_prompt_parts where dataset = 'oven' "
        "and (section = 'prefix' or qid = 'test-4') order by section, part_index",
    )
    recorded = json.loads((RECORDED / "oven.json").read_text(encoding="utf-8"))["prompts"]["test/test-4"]["parts"]
    assert [(p["mime_type"], p.get("text"), p.get("media_sha256")) for p in recorded] == parts
    estimates = query(
        database,
        "select system, status, media_tokens from loft_32k.mm_cost_estimates where split = 'test' and "
        "(system, dataset) in (('gemini-2.5-flash', 'flickr30k'), ('gpt-4o', 'fleurs_en_tts')) order by 1",
    )
    # 6 corpus images x 258 tokens in each of the 2 test requests; GPT-4o takes no audio here.
    assert estimates == [("gemini-2.5-flash", "estimated", 2 * 6 * 258), ("gpt-4o", "skipped_unsupported", None)]
    (root / "loft" / "mm" / "oven" / "128k" / "resources" / "oven-003.png").write_bytes(b"not an image")
    broken = run_dbt(["build", "--select", *_select("128k")], tmp_path / "broken.duckdb", env)
    bad = f"{root}/loft/mm/oven/128k/corpus.jsonl:4: {root}/loft/mm/oven/128k/resources/oven-003.png: not an image"
    assert broken.returncode != 0 and bad in broken.stdout
