"""Write python/loft_warehouse/prompts/loft_prompts.json from a LOFT checkout (run by hand, outside
the project's environment).

    python tests/differential/extract_loft_prompts.py --loft /path/to/loft --commit SHA

LOFT's prompt strings are benchmark inputs: this reads them from its prompts/constants modules
(imported from --loft; nothing of its code is copied) and stores each with the constant it comes
from and the commit. Its interpreter needs LOFT's requirements.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

TARGET = Path(__file__).resolve().parents[2] / "python" / "loft_warehouse" / "prompts" / "loft_prompts.json"


def _entry(path: str, name: str, value: object) -> dict:
    return {"source": f"{path}:{name}", "value": value}


def extract(loft: Path, commit: str) -> dict:
    sys.path.insert(0, str(loft))
    from prompts.constants import common, icl, mm, rag, retrieval, sql

    from prompts import utils as prompt_utils

    document = {
        "provenance": {
            "repository": "google-deepmind/loft",
            "commit": commit,
            "license": "Apache-2.0",
            "note": "Prompt strings of LOFT's prompt code (prompts/constants/*.py, prompts/utils.py) as its "
            "few_shot_with_cot / many_shot prompts use them; read by python/loft_warehouse/prompts/instructions.py, "
            "prompts/sql.py and prompts/multimodal.py; written by tests/differential/extract_loft_prompts.py.",
        },
        "common": {
            "default_title": _entry("prompts/utils.py", "DEFAULT_TITLE", prompt_utils.DEFAULT_TITLE),
            "few_shot_separator": _entry(
                "prompts/constants/common.py", "FEW_SHOT_SEPARATOR", common.FEW_SHOT_SEPARATOR
            ),
            "test_query_separator": _entry(
                "prompts/constants/common.py", "TEST_QUERY_SEPARATOR", common.TEST_QUERY_SEPARATOR
            ),
            "final_answer_format": _entry(
                "prompts/constants/common.py", "FINAL_ANSWER_FORMAT", common.FINAL_ANSWER_FORMAT
            ),
            "generic_corpus_instruction": _entry(
                "prompts/constants/common.py", "CORPUS_INSTRUCTION", common.CORPUS_INSTRUCTION
            ),
        },
    }
    for task, module in (("retrieval", retrieval), ("rag", rag)):
        path = f"prompts/constants/{task}.py"
        document[task] = {
            "prompt_mapper": _entry(path, "PROMPT_MAPPER", module.PROMPT_MAPPER),
            "formatting_instruction": _entry(path, "FORMATTING_INSTRUCTION", module.FORMATTING_INSTRUCTION),
            "corpus_instruction": _entry(path, "CORPUS_INSTRUCTION", module.CORPUS_INSTRUCTION),
            "corpus_format": _entry(path, "CORPUS_FORMAT_ECHO", module.CORPUS_FORMAT_ECHO),
            "reasoning_format": _entry(
                path, "FEW_SHOT_EXAMPLE_COT_FORMAT_SIMPLE_REVERSE", module.FEW_SHOT_EXAMPLE_COT_FORMAT_SIMPLE_REVERSE
            ),
            "query_format": _entry(path, "QUERY_FORMAT_SIMPLE_REVERSE", module.QUERY_FORMAT_SIMPLE_REVERSE),
            "query_format_no_cot": _entry(path, "QUERY_FORMAT_NO_COT", module.QUERY_FORMAT_NO_COT),
        }
    path = "prompts/constants/sql.py"
    document["sql"] = {
        "prompt_mapper": _entry(path, "PROMPT_MAPPER", sql.PROMPT_MAPPER),
        "corpus_instruction": _entry(path, "CORPUS_INSTRUCTION", sql.CORPUS_INSTRUCTION),
        "few_shot_examples": _entry(path, "FEW_SHOT_EXAMPLES_V1", sql.FEW_SHOT_EXAMPLES_V1),
        "corpus_format": _entry(path, "CORPUS_FORMAT", sql.CORPUS_FORMAT),
        "query_format": _entry(path, "QUERY_FORMAT_0", sql.QUERY_FORMAT_0),
        "follow_up_query_format": _entry(path, "FOLLOW_UP_QUERY_FORMAT_0", sql.FOLLOW_UP_QUERY_FORMAT_0),
    }
    path = "prompts/constants/icl.py"
    document["icl"] = {
        "corpus_instruction": _entry(path, "CORPUS_INSTRUCTION", icl.CORPUS_INSTRUCTION),
        "corpus_format": _entry(path, "CORPUS_FORMAT", icl.CORPUS_FORMAT),
        "target_proposition": _entry(path, "TARGET_PROPOSITION", icl.TARGET_PROPOSITION),
        "ending_notation": _entry(path, "ENDING_NOTATION", icl.ENDING_NOTATION),
    }
    path = "prompts/constants/mm.py"
    document["mm"] = {
        "prompt_mapper": _entry(path, "PROMPT_MAPPER", mm.PROMPT_MAPPER),
        "corpus_instruction": _entry(path, "CORPUS_INSTRUCTION", mm.CORPUS_INSTRUCTION),
        "corpus_format": _entry(path, "CORPUS_FORMAT", mm.CORPUS_FORMAT),
        "query_prefix": _entry(path, "QUERY_FORMAT_PREFIX", mm.QUERY_FORMAT_PREFIX),
        "query_suffix": _entry(path, "QUERY_FORMAT_SUFFIX", mm.QUERY_FORMAT_SUFFIX),
        "few_shot_query_prefix": _entry(path, "FEW_SHOT_QUERY_FORMAT_PREFIX", mm.FEW_SHOT_QUERY_FORMAT_PREFIX),
        "few_shot_query_suffix": _entry(path, "FEW_SHOT_QUERY_FORMAT_SUFFIX", mm.FEW_SHOT_QUERY_FORMAT_SUFFIX),
        "few_shot_answer_format": _entry(path, "FEW_SHOT_EXAMPLE_ANSWER_FORMAT", mm.FEW_SHOT_EXAMPLE_ANSWER_FORMAT),
    }
    return document


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loft", type=Path, required=True, help="a checkout of google-deepmind/loft")
    parser.add_argument("--commit", required=True, help="the checkout's commit")
    args = parser.parse_args()
    document = extract(args.loft.resolve(), args.commit)
    TARGET.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {TARGET}")


if __name__ == "__main__":
    main()
