"""Issue 60 item 2: the peak memory of each hostile input that once grew a command past 4 GiB.

Each case runs what a user runs, in a child process whose tree's resident memory is sampled every
50 ms (hostile_import_memory.run_sampled), and prints its exit code, wall time, peak RSS and the
last line it printed:
- nul-file: `loft import-predictions` of a 2 GiB file of NUL bytes (sparse: no disk is used);
- yaml-bomb: `loft build --vars` with nine levels of nine YAML aliases (295 bytes);
- yaml-bomb-dbt: the same --vars given to a plain `dbt build` (refused by python/dbt_loft_checks.py);
- big-passage: `loft build --select loft_32k` of ArguAna with one passage of 50 MiB;
- dev-zero: `loft build --select loft_32k` of a multimodal release whose first image is /dev/zero;
- streamed-reply: one streamed call to a server (the fixture, in this process) that ignores
  max_tokens and sends a 300 MiB answer, made by the OpenAI provider in a child process.
The SQL cases (10 MiB statements, four-byte results) are hostile_import_memory.py's --attack.

    .venv/bin/python benchmarks/hostile_memory.py [--case NAME ...] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import yaml
from hostile_import_memory import BIN, ROOT, run_sampled

sys.path.insert(0, str(ROOT))
from tests.hostile_inputs import ALIAS_BOMB  # noqa: E402 - the tests' own hostile inputs
from tests.mm_release import write_release  # noqa: E402 - a generated release, as the tests make it

from loft_warehouse.inference.fixture_server import FixtureServer, FixtureState  # noqa: E402
from loft_warehouse.settings import data_dir  # noqa: E402

STREAMED_CALL = """
import sys
from pathlib import Path
from loft_warehouse.inference.providers.base import Request
from loft_warehouse.inference.systems import load_systems
system = load_systems(Path(sys.argv[1]))["hostile-server"]
provider = system.kind.make(system, None)
request = Request(key="k", prefix_id="p", prefix="", messages=({"role": "user", "content": "hi"},), n_tokens=1)
try:
    completion = provider.complete(request)
    print(f"returned {completion.status} with {len(completion.raw_text or ''):,} characters of text")
except Exception as exc:
    print(f"{type(exc).__name__}: {exc}")
"""


def _arguana_with_a_big_passage(work: Path) -> Path:
    root = work / "data"
    release = root / "loft/retrieval/arguana/32k"
    shutil.copytree(data_dir() / "loft/retrieval/arguana/32k", release)
    (root / "tokenizers").symlink_to(data_dir() / "tokenizers")
    corpus = release / "corpus.jsonl"
    lines = corpus.read_text(encoding="utf-8").splitlines(keepends=True)
    record = json.loads(lines[0])
    lines[0] = json.dumps({**record, "passage_text": "word " * (10 * 2**20)}) + "\n"
    corpus.write_text("".join(lines), encoding="utf-8")
    return root


def _release_reading_dev_zero(work: Path) -> Path:
    root = work / "mm"
    write_release(root, ("flickr30k",))
    (root / "tokenizers").symlink_to(data_dir() / "tokenizers")
    image = root / "loft/mm/flickr30k/32k/resources/flickr30k-000.png"
    image.unlink()
    image.symlink_to("/dev/zero")
    return root


def _build(work: Path, root: Path, dataset: str) -> list[str]:
    os.environ.update(
        {
            "LOFT_DATA_DIR": str(root),
            "LOFT_DUCKDB_PATH": str(work / f"{dataset.replace('/', '_')}.duckdb"),
            "LOFT_RESPONSE_STORE": str(work / "store.sqlite"),
            "LOFT_TOKENIZER_MODEL": str(data_dir() / "tokenizers/sentencepiece/mistral_tokenizer.model.v1"),
        }
    )
    return [str(BIN / "loft"), "build", "--select", "loft_32k", "--vars", f"{{datasets: [{dataset}], systems: [bm25]}}"]


def _streamed_reply(work: Path, server: FixtureServer) -> list[str]:
    systems = work / "systems.yaml"
    entry = {
        "name": "hostile-server",
        "provider": "openai_compatible",
        "model": "any",
        "api_key_env": "LOFT_TEST_OPENAI_KEY",
        "base_url_env": "LOFT_TEST_OPENAI_BASE_URL",
        "context_window": 1000,
        "generation": {"max_output_tokens": 32},
        "max_attempts": 1,
        "timeout_s": 600,
    }
    systems.write_text(yaml.safe_dump({"systems": [entry]}))
    os.environ.update({"LOFT_TEST_OPENAI_KEY": "sk-test-key", "LOFT_TEST_OPENAI_BASE_URL": f"{server.url}/v1"})
    return [sys.executable, "-c", STREAMED_CALL, str(systems)]


def main() -> None:
    cases = ("nul-file", "yaml-bomb", "yaml-bomb-dbt", "big-passage", "dev-zero", "streamed-reply")
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", action="append", choices=cases, help="run only these (default: all)")
    parser.add_argument("--keep", type=Path, default=None, help="work here and keep it (default: a temp folder)")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="loft-hostile-memory-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ.update({"PYTHONPATH": f"{ROOT / 'python'}{os.pathsep}{ROOT}", "DO_NOT_TRACK": "1"})
    state = FixtureState()
    state.answer = lambda prompt: "Final Answer: ['" + "word " * (60 * 2**20) + "']"  # 300 MiB
    with FixtureServer(state) as server:
        for case in args.case or cases:
            if case == "nul-file":
                nul = work / "nul.jsonl"
                with nul.open("wb") as handle:
                    handle.truncate(2 * 2**30)
                queries = data_dir() / "loft/retrieval/arguana/128k/test_queries.jsonl"
                command = [str(BIN / "loft"), "import-predictions", str(nul), "--system", "nul", "--size", "128k",
                           "--task", "retrieval", "--dataset", "arguana", "--queries", str(queries),
                           "--imports-dir", str(work / "imports")]  # fmt: skip
            elif case == "yaml-bomb":
                os.environ["LOFT_DUCKDB_PATH"] = str(work / "bomb.duckdb")
                command = [str(BIN / "loft"), "build", "--select", "loft_32k", "--vars", ALIAS_BOMB]
            elif case == "yaml-bomb-dbt":
                os.environ["LOFT_DUCKDB_PATH"] = str(work / "bomb.duckdb")
                command = [str(BIN / "dbt"), "build", "--select", "loft_32k", "--vars", ALIAS_BOMB,
                           "--project-dir", str(ROOT), "--profiles-dir", str(ROOT),
                           "--target-path", str(work / "target"), "--log-path", str(work / "logs")]  # fmt: skip
            elif case == "big-passage":
                command = _build(work, _arguana_with_a_big_passage(work), "retrieval/arguana")
            elif case == "dev-zero":
                command = _build(work, _release_reading_dev_zero(work), "mm/flickr30k")
            else:
                command = _streamed_reply(work, server)
            rc, wall, tree, own, output = run_sampled(command, dict(os.environ))
            last = output.strip().splitlines()[-1] if output.strip() else ""
            print(
                f"{case}: rc {rc}, {wall:.1f} s, peak tree RSS {tree / 1024:,.0f} MiB, own peak {own / 1024:,.0f} MiB"
            )
            print(f"  {last[:300]}")


if __name__ == "__main__":
    main()
