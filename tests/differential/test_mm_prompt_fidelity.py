"""Multimodal prompts are LOFT's, part for part: the warehouse renders the generated mm release
under prompt_data/loft/mm that LOFT's prompt code rendered (mm_prompts/*.json, recorded outside
the project by record_mm_prompts.py). Every query's parts match in order: text parts byte for
byte, media parts by mime type, sha256 and size of the bytes sent; gold answers are the same
shown IDs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loft_warehouse.prompts.multimodal import render
from loft_warehouse.sources import loft_mm
from tests import mm_release

HERE = Path(__file__).resolve().parent
DATA = HERE / "prompt_data"
RECORDED = sorted((HERE / "mm_prompts").glob("*.json"))


def _as_sent(prompt: loft_mm.MultimodalData, parts) -> list[dict]:
    out = []
    for part in parts:
        if part.text is not None:
            out.append({"mime_type": part.mime_type, "text": part.text})
        else:
            media = prompt.media[part.media_sha256]
            out.append({"mime_type": media.mime_type, "media_sha256": media.sha256, "bytes": media.byte_size})
    return out


def test_every_generated_dataset_was_recorded():
    assert [path.stem for path in RECORDED] == sorted(mm_release.DATASETS)


@pytest.mark.parametrize("recorded", RECORDED, ids=[path.stem for path in RECORDED])
def test_parts_match_loft(recorded: Path):
    document = json.loads(recorded.read_text(encoding="utf-8"))
    data = loft_mm.load(HERE / document["provenance"]["data"])
    prompt = render(document["dataset"], data.source, data.media)
    ours = {f"{row.split}/{row.qid}": row for row in prompt.rows}
    assert sorted(ours) == sorted(document["prompts"])
    for key, expected in document["prompts"].items():
        row = ours[key]
        assert _as_sent(data, prompt.prefix + row.suffix) == expected["parts"], key
        assert [list(row.gold_shown_ids)] == expected["gold_answers"], key


def test_the_committed_inputs_are_what_the_generator_writes(tmp_path: Path):
    mm_release.write_release(tmp_path)
    committed = DATA / "loft" / "mm"
    written = tmp_path / "loft" / "mm"
    names = sorted(str(p.relative_to(committed)) for p in committed.rglob("*") if p.is_file())
    assert names == sorted(str(p.relative_to(written)) for p in written.rglob("*") if p.is_file())
    assert all((committed / name).read_bytes() == (written / name).read_bytes() for name in names)
