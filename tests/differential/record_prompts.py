"""Record LOFT's own prompt rendering of the prompt fixtures (run outside the project, by hand).

    python tests/differential/record_prompts.py --loft /path/to/loft --commit SHA [--arguana DIR]

For every prompt in PROMPTS, LOFT's prompt code (its `prompts` package, imported from --loft;
nothing of it is copied here) renders the release-format files under prompt_data/ (or, for
arguana, the real release folder given with --arguana), and prompts/<prompt name>.json records
each query's first-turn prompt: all context chunks and the first query turn's chunks joined as
LOFT sends them (run_inference concatenates the chunks; dump_prompts.py strips the result),
with its sha256, and the text itself for the small fixtures.

Its interpreter needs LOFT's requirements (absl-py, numpy, scipy, pillow, opencv).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "prompts"
# (LOFT prompt name, task, dataset, length, whether to keep the texts)
PROMPTS = [
    ("retrieval_nq_128k_test:few_shot_with_cot", "retrieval", "nq", "128k", True),
    ("retrieval_hotpotqa_128k_test:few_shot_with_cot", "retrieval", "hotpotqa", "128k", True),
    ("rag_nq_128k_test:few_shot_with_cot", "rag", "nq", "128k", True),
    ("rag_quest_128k_test:few_shot_with_cot", "rag", "quest", "128k", True),
    ("sql_spider_128k_test:few_shot_with_cot", "sql", "spider", "128k", True),
    ("sql_sparc_128k_test:few_shot_with_cot", "sql", "sparc", "128k", True),
    ("icl_date_understanding_32k_test:many_shot", "icl", "date_understanding", "32k", True),
    ("retrieval_arguana_128k_test:few_shot_with_cot", "retrieval", "arguana", "128k", False),
]


def record(loft: Path, commit: str, arguana: Path | None) -> None:
    sys.path.insert(0, str(loft))
    from prompts.prompt_registry import PromptRegistry

    import prompts  # noqa: F401 - registers LOFT's prompts

    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as base:
        data = Path(base) / "data"
        for name, task, dataset, length, keep_text in PROMPTS:
            target = data / task / dataset / length
            target.parent.mkdir(parents=True, exist_ok=True)
            source = arguana if dataset == "arguana" else HERE / "prompt_data" / "loft" / task / dataset / length
            if source is None:
                print(f"{name}: skipped (no --arguana)")
                continue
            target.symlink_to(source.resolve())
            examples = PromptRegistry.get_examples(name=name, base_dir=base)
            found = {}
            for example in examples:
                chunks = list(example.context_chunks) + list(example.query_turns[0].chunks)
                text = "".join(chunk.data.decode("utf-8") for chunk in chunks)
                entry = {"sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "chars": len(text)}
                if keep_text:
                    entry["text"] = text
                found[example.qid] = entry
            document = {
                "provenance": {
                    "renderer": f"google-deepmind/loft prompts.PromptRegistry.get_examples({name!r})",
                    "commit": commit,
                    "data": str(source.relative_to(HERE))
                    if source.is_relative_to(HERE)
                    else "shared data: " + "/".join(source.parts[-4:]),
                    "recorded_by": "tests/differential/record_prompts.py",
                },
                "task": task,
                "dataset": dataset,
                "length": length,
                "prompts": found,
            }
            path = OUT / f"{name.replace(':', '__')}.json"
            path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            print(f"{name}: {len(found)} prompts")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loft", type=Path, required=True, help="a checkout of google-deepmind/loft")
    parser.add_argument("--commit", required=True, help="the checkout's commit")
    parser.add_argument("--arguana", type=Path, default=None, help="the release folder retrieval/arguana/128k")
    args = parser.parse_args()
    record(args.loft.resolve(), args.commit, args.arguana)


if __name__ == "__main__":
    main()
