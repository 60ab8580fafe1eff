"""Record LOFT's own multi-turn conversations of the prompt fixtures (run outside the project).

    python tests/differential/record_turns.py --loft /path/to/loft --commit SHA

For each multi-turn prompt in PROMPTS, LOFT's prompt code renders the release-format fixture under
prompt_data/ and LOFT's own conversation loop (`utils.run_one_example`) runs each query against a
stand-in model that answers every turn with the planted reply of RESPONSES. The stand-in does
what LOFT's Gemini wrapper does with a reply: `utils.extract_prediction` (LOFT's code), then IDs
to pids through run_inference's pid_mapper for retrieval. turns/<prompt name>.json records, per
query, the replies and the full text LOFT sends at each turn (context, turns so far and the
answers LOFT appended after each earlier turn).

LOFT's retrieval prompts do not render a multi-turn query (their gold-answer processors stop
on it at 219f68e), so retrieval's feed-back (IDs mapped to pids) has no recording here; its unit
test follows run_inference's pid_mapper.

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
OUT = HERE / "turns"
# (LOFT prompt name, task, dataset, length)
PROMPTS = [
    ("sql_sparc_128k_test:few_shot_with_cot", "sql", "sparc", "128k"),
    ("rag_topiocqa_128k_test:few_shot_with_cot", "rag", "topiocqa", "128k"),
]
# Planted replies per qid and turn: an apostrophe inside a word, a bracket in a reasoning line
# before the answer (LOFT reads that line: a tuple), markdown around tuple rows, no list at all,
# an unquoted list LOFT cannot read.
RESPONSES = {
    "c1": ["The singers:\nFinal Answer: [['Stark's Park', 10104]]", "Final Answer: []"],
    "c2": [
        "Rows [1], [2] of stadium count.\nFinal Answer: [[2]]",
        "**Final Answer:** `[('Somerset Park', 11998)]`",
        "Final Answer: [['Ayr United']]",
    ],
    "c3": ["I cannot tell from these tables.", "Final Answer: [['Auditions'], ['Super bootcamp']]"],
    "t1": [
        "Passage 0 says so.\nFinal Answer: ['an English pop band']",
        'Final Answer: ["Me and My Broken Heart", "Rixton\'s single"]',
        "Final Answer: ['17 February 2014']",
    ],
    "t2": ["*Final Answer:* [Manchester]", "Final Answer: ['North West England']"],
}


class PlantedModel:
    """Answers each turn with its planted reply, read back as LOFT's model wrapper reads one."""

    def __init__(self, loft_utils, pid_mapper: dict[str, str] | None) -> None:
        self.loft_utils = loft_utils
        self.pid_mapper = pid_mapper
        self.replies: list[str] = []
        self.sent: list[str] = []

    def infer(self, chunks) -> list:
        self.sent.append("".join(chunk.data.decode("utf-8") for chunk in chunks))
        answers = self.loft_utils.extract_prediction(self.replies[len(self.sent) - 1], "final answer")
        if self.pid_mapper is not None:
            answers = [self.pid_mapper[str(answer)] for answer in answers]
        return answers


def record(loft: Path, commit: str) -> None:
    sys.path.insert(0, str(loft))
    import utils as loft_utils
    from prompts.prompt_registry import PromptRegistry

    import prompts  # noqa: F401 - registers LOFT's prompts

    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as base:
        for name, task, dataset, length in PROMPTS:
            source = HERE / "prompt_data" / "loft" / task / dataset / length
            target = Path(base) / "data" / task / dataset / length
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(source.resolve())
            pid_mapper = None
            if task == "retrieval":
                corpus = loft_utils.load_data_from_file(
                    data_dir=f"{task}/{dataset}/{length}", base_dir=base, split="test"
                )
                pid_mapper = {str(index): pid for index, pid in enumerate(corpus.corpus)}
            conversations = {}
            for example in PromptRegistry.get_examples(name=name, base_dir=base):
                model = PlantedModel(loft_utils, pid_mapper)
                model.replies = RESPONSES[example.qid]
                output = loft_utils.run_one_example(example, model, {})
                conversations[example.qid] = {
                    "responses": model.replies,
                    "fed_back": [str(answers) for answers in output["model_outputs"]],
                    "prompts": [
                        {"sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "text": text}
                        for text in model.sent
                    ],
                }
            document = {
                "provenance": {
                    "renderer": "google-deepmind/loft utils.run_one_example over "
                    f"PromptRegistry.get_examples({name!r})",
                    "commit": commit,
                    "data": str(source.relative_to(HERE)),
                    "recorded_by": "tests/differential/record_turns.py",
                },
                "task": task,
                "dataset": dataset,
                "length": length,
                "conversations": conversations,
            }
            path = OUT / f"{name.replace(':', '__')}.json"
            path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            replies = sum(len(conversation["responses"]) for conversation in conversations.values())
            print(f"{name}: {len(conversations)} conversations, {replies} replies")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loft", type=Path, required=True, help="a checkout of google-deepmind/loft")
    parser.add_argument("--commit", required=True, help="the checkout's commit")
    args = parser.parse_args()
    record(args.loft.resolve(), args.commit)


if __name__ == "__main__":
    main()
