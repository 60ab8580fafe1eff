"""What a size builds: any dataset in the release layout, with any name; registered release
datasets without files are listed once."""

from __future__ import annotations

import json
from pathlib import Path

from loft_warehouse.registry import specs_for_size


def _release(root: Path, task: str, dataset: str) -> None:
    folder = root / "loft" / task / dataset / "128k"
    folder.mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(json.dumps({"pid": "p", "title_text": "", "passage_text": "x"}) + "\n")


def test_any_release_dataset_is_built_with_its_family(tmp_path: Path, capsys) -> None:
    _release(tmp_path, "retrieval", "my_catalogue")
    _release(tmp_path, "rag", "quest")
    built = {(s.task, s.dataset): s for s in specs_for_size(tmp_path, "128k", ("rag/quest", "retrieval/my_catalogue"))}
    assert built[("retrieval", "my_catalogue")].source == "loft_release"
    assert built[("rag", "quest")].multi_answer and not built[("retrieval", "my_catalogue")].multi_answer
    assert capsys.readouterr().out == ""


def test_declared_release_datasets_without_files_are_listed_in_one_line(tmp_path: Path, capsys) -> None:
    _release(tmp_path, "retrieval", "arguana")
    (tmp_path / "raw").mkdir()
    specs_for_size(tmp_path, "128k")
    out = capsys.readouterr().out.splitlines()
    assert out == [f"declared, no files at 128k in {tmp_path / 'loft'}: retrieval/fiqa, retrieval/quora"]


def test_without_raw_sources_only_the_release_is_built_and_the_rest_named_once(tmp_path: Path, capsys) -> None:
    _release(tmp_path, "retrieval", "arguana")
    built = specs_for_size(tmp_path, "128k")
    assert [(s.task, s.dataset) for s in built] == [("retrieval", "arguana")]
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and out[1].startswith(f"no raw/ in {tmp_path}: building the release datasets only; skipped")
    assert "sql/spider" in out[1] and "rag/nq" in out[1]


def test_a_multimodal_release_is_named_and_its_names_are_a_selection(tmp_path: Path, capsys) -> None:
    _release(tmp_path, "retrieval", "arguana")
    for dataset in ("flickr30k", "fleurs_en_tts"):
        (tmp_path / "loft" / "mm" / dataset / "128k").mkdir(parents=True)
    (tmp_path / "loft" / "mm" / "oven" / "32k").mkdir(parents=True)
    built = specs_for_size(tmp_path, "128k", ("retrieval/arguana",))
    assert [(s.task, s.dataset) for s in built] == [("retrieval", "arguana")]
    assert capsys.readouterr().out.splitlines() == [
        f"multimodal at 128k: mm/fleurs_en_tts, mm/flickr30k in {tmp_path / 'loft'} are landed and rendered "
        "(loft_128k__stg_mm_media, __mm_prompt_parts) as prompts of task mm, sent with "
        "their media to the systems that take them"
    ]
    assert specs_for_size(tmp_path, "128k", ("mm/flickr30k", "retrieval/arguana"), quiet=True)
