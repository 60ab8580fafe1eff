"""Record LOFT's own multimodal prompts for the generated mm release (run outside the project, by hand).

    python tests/differential/record_mm_prompts.py --loft /path/to/loft --commit SHA

prompt_data/loft/mm/ holds a small release written by tests/mm_release.py (images drawn with
Pillow, videos as frames, WAV tones). For each of its datasets LOFT's prompt code (its `prompts`
package, imported from --loft; nothing of it is copied here) renders
`mm_{dataset}_32k_{split}:few_shot_with_cot` for the dev and test splits, and
mm_prompts/{dataset}.json records each query's first-turn content chunks in order, as LOFT
sends them (one part per chunk): a text chunk's text, a media chunk's mime type, sha256 and byte
count of the bytes it sends (ContentChunk.data: an image resized to 512x512 JPEG, a WAV as is).
The media hashes depend on Pillow's JPEG encoder: the version used is recorded.

Its interpreter needs LOFT's requirements (attrs, numpy, pillow; absl-py is not imported here).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "prompt_data" / "loft" / "mm"
OUT = HERE / "mm_prompts"
LENGTH = "32k"
SPLITS = ("dev", "test")


def _part(chunk) -> dict:
    if chunk.mime_type == "text/plain":
        return {"mime_type": str(chunk.mime_type), "text": chunk.data.decode("utf-8")}
    data = chunk.data
    return {"mime_type": str(chunk.mime_type), "media_sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def record(loft: Path, commit: str) -> None:
    sys.path.insert(0, str(loft))
    import PIL
    from prompts.prompt_registry import PromptRegistry

    import prompts  # noqa: F401 - registers LOFT's prompts

    OUT.mkdir(exist_ok=True)
    for folder in sorted(p for p in DATA.iterdir() if p.is_dir()):
        dataset = folder.name
        with tempfile.TemporaryDirectory() as base:
            target = Path(base) / "data" / "mm" / dataset / LENGTH
            target.parent.mkdir(parents=True)
            target.symlink_to((folder / LENGTH).resolve())
            found = {}
            for split in SPLITS:
                name = f"mm_{dataset}_{LENGTH}_{split}:few_shot_with_cot"
                PromptRegistry.base_dir = base
                for example in PromptRegistry.get_examples(name=name, base_dir=base):
                    chunks = list(example.context_chunks) + list(example.query_turns[0].chunks)
                    found[f"{split}/{example.qid}"] = {
                        "gold_answers": [list(turn) for turn in example.gold_answers],
                        "parts": [_part(chunk) for chunk in chunks],
                    }
        document = {
            "provenance": {
                "renderer": "google-deepmind/loft prompts.PromptRegistry.get_examples"
                f"('mm_{dataset}_{LENGTH}_<split>:few_shot_with_cot')",
                "commit": commit,
                "pillow": PIL.__version__,
                "data": str((folder / LENGTH).relative_to(HERE)),
                "recorded_by": "tests/differential/record_mm_prompts.py",
            },
            "dataset": dataset,
            "length": LENGTH,
            "prompts": found,
        }
        path = OUT / f"{dataset}.json"
        path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{dataset}: {len(found)} prompts")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loft", type=Path, required=True, help="a checkout of google-deepmind/loft")
    parser.add_argument("--commit", required=True, help="the checkout's commit")
    args = parser.parse_args()
    record(args.loft.resolve(), args.commit)


if __name__ == "__main__":
    main()
