"""Record LOFT's own evaluator on the differential cases (run outside the project, by hand).

    python tests/differential/record_upstream.py --loft /path/to/loft [--commit SHA] [case ...]

runs, for every case folder under tests/differential/cases/, the upstream evaluator of a LOFT
checkout (its `evaluation` package, imported from --loft; nothing of it is copied here) on the
case's answer file and prediction file, and writes `upstream.json` beside them: the metric rows
per line and the aggregate, with the LOFT commit they came from. The loop is run_evaluation.py's
(predictions keyed by qid, the last line of a qid winning; qids not in the answer file ignored;
an unanswered query scored as one turn with model_output [""]), with two differences that keep
the CLI from stopping where its evaluator would score: a prediction without `metadata` is given
`{}` (retrieval reads `"candidate_path" in metadata`, a TypeError on None), and an ICL answer
file in JSON lines is read like the others (the CLI takes only BBH's JSON array for ICL).

Its interpreter needs LOFT's requirements (absl-py, numpy, scipy).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

CASES = Path(__file__).resolve().parent / "cases"


def _lines(path: Path) -> list[str]:
    """The file's non-blank lines as LOFT's `open(path)` iterates them (universal newlines: a lone
    CR ends a line, a U+2028 inside a string does not)."""
    with path.open(encoding="utf-8") as handle:
        return [line for line in handle if line.strip()]


def _answers(path: Path) -> list[dict]:
    if path.suffix == ".json":
        return json.loads(path.read_text(encoding="utf-8"))
    return [json.loads(line) for line in _lines(path)]


def record(case: Path, loft: Path) -> dict:
    """Upstream's per-line metrics and aggregate for one case, in a fresh evaluator."""
    sys.path.insert(0, str(loft))
    import importlib

    evaluation = importlib.import_module("evaluation")
    loft_evaluation = importlib.import_module("evaluation.loft_evaluation")
    spec = json.loads((case / "case.json").read_text(encoding="utf-8"))
    task = evaluation.EVALUATION_TASKS[spec["task_type"]]
    task.metrics.clear()
    answer_file = next(p for p in case.iterdir() if p.name.startswith("queries."))
    predictions = {}
    for line in _lines(case / "preds.jsonl"):
        record_ = json.loads(line)
        predictions[record_["qid"]] = record_
    rows, unanswered = [], 0
    for index, blob in enumerate(_answers(answer_file)):
        qid = blob.get("qid", str(index))
        gold = blob.get("answers", [blob.get("target", "").split(" ")])
        prediction = predictions.get(qid)
        if not prediction:
            unanswered += 1
            instance = loft_evaluation.EvaluationInstance(
                qid=qid, gold_answers=gold, model_output=[""], num_turns=1, metadata={}
            )
        else:
            instance = loft_evaluation.EvaluationInstance(
                qid=qid,
                gold_answers=gold,
                model_output=prediction["model_outputs"],
                num_turns=prediction["num_turns"],
                metadata=prediction.get("metadata") or {},
            )
        rows.extend(task.evaluate(instance))
    aggregate = {k: float(v) for k, v in task.aggregate_metrics().items()}
    return {"per_line": rows, "aggregate": aggregate, "num_unanswered_queries": unanswered}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loft", type=Path, required=True, help="a checkout of google-deepmind/loft")
    parser.add_argument("--commit", default=None, help="the checkout's commit (default: git rev-parse HEAD)")
    parser.add_argument("cases", nargs="*", help="case folder names (default: all)")
    args = parser.parse_args()
    commit = (
        args.commit
        or subprocess.run(
            ["git", "-C", str(args.loft), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
    )
    names = args.cases or sorted(p.name for p in CASES.iterdir() if (p / "case.json").exists())
    for name in names:
        case = CASES / name
        # A fresh interpreter per case: upstream's evaluators are module-level and accumulate.
        if len(args.cases) != 1:
            command = [sys.executable, __file__, "--loft", str(args.loft), "--commit", commit, name]
            subprocess.run(command, check=True)
            continue
        try:
            result = record(case, args.loft.resolve())
        except Exception as exc:  # noqa: BLE001 - upstream refusing an input is what is recorded
            result = {"error": f"{type(exc).__name__}: {exc}"}
        result["provenance"] = {
            "evaluator": "google-deepmind/loft evaluation.EVALUATION_TASKS (run_evaluation.py's loop)",
            "commit": commit or "unknown",
            "recorded_by": "tests/differential/record_upstream.py",
        }
        (case / "upstream.json").write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{name}: {len(result.get('per_line', []))} rows {result.get('error', '')}")


if __name__ == "__main__":
    main()
