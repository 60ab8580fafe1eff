"""A generated multimodal release built at 32k and 128k by dbt and answered by three providers
(Gemini, OpenAI, Anthropic through their real clients) against the fixture, streamed: the
fixture answers a query only when its prompt arrived as the warehouse rendered it (every media
part intact and in order), right on the dev query and the first test query, wrong on the
second, so recall@1 is 1.0 on dev and 0.5 on test for every dataset a provider takes; a
provider that takes no audio is skipped_unsupported there and its metric is not_run; the
leaderboard sets the paper's FLEURS rows beside fleurs_en_tts."""

from __future__ import annotations

from pathlib import Path

import pytest

from loft_warehouse import media_tables
from loft_warehouse.inference.fixture_server import FixtureServer, FixtureState
from loft_warehouse.prompts import multimodal_rows
from tests import mm_release
from tests.conftest import query, run_dbt
from tests.inference.support import anthropic_system, fixture_env, gemini_system, openai_system, write_systems

pytestmark = pytest.mark.slow
SIZES = ("32k", "128k")
SYSTEMS = ("gemini-mm", "gpt-mm", "claude-mm")
AUDIO = ("fleurs_en_tts", "fleurs_en_stt")


def _expected_prompts(root: Path) -> dict[str, str]:
    """Each query's whole prompt as the warehouse renders it (marked text) -> its qid."""
    out: dict[str, str] = {}
    for size in SIZES:
        tables = media_tables.build(root, size)
        mm = multimodal_rows.tables(tables.prompt_parts, tables.queries, tables.corpus, lambda t: [0] * len(t))
        prefixes = dict(zip(mm.prefixes["prefix_id"], mm.prefixes["text"], strict=True))
        for row in mm.prompts.iter_rows(named=True):
            out[prefixes[row["prefix_id"]] + row["suffix"]] = row["qid"]
    return out


def _answer(expected: dict[str, str]):
    def answer(prompt: str) -> str:
        qid = expected.get(prompt)
        if qid is None:
            return "Final Answer: ['garbled']"
        item = qid.rsplit("-", 1)[1]
        return "Final Answer: ['0']" if qid == "test-4" else f"Final Answer: ['{item}']"

    return answer


def test_three_providers_answer_the_generated_release_at_two_sizes(tmp_path: Path, shared_data: Path) -> None:
    root = tmp_path / "data"
    mm_release.write_release(root)
    mm_release.write_release(root, size="128k", n_docs=8)
    (root / "tokenizers").symlink_to(shared_data / "tokenizers")
    systems = write_systems(
        tmp_path / "systems.yaml",
        [
            gemini_system("gemini-mm", cache={"min_prefix_tokens": 100, "ttl_s": 60}),
            openai_system("gpt-mm", context_window=128000),
            anthropic_system("claude-mm", model="claude-opus-4-5-20251101", cache={"min_prefix_tokens": 1024}),
        ],
    )
    with FixtureServer(FixtureState(answer=_answer(_expected_prompts(root)))) as server:
        env = {
            "LOFT_DATA_DIR": str(root),
            "LOFT_RESPONSE_STORE": str(tmp_path / "store.sqlite"),
            **fixture_env(server),
        }
        settings = f"{{datasets: ['mm/*'], systems: [{', '.join(SYSTEMS)}], systems_file: '{systems}'}}"
        database = tmp_path / "loft.duckdb"
        built = run_dbt(["build", "--select", "loft_32k", "loft_128k", "--vars", settings], database, env)
        assert built.returncode == 0, built.stdout[-5000:]
        requests = server.state.generation_requests()
    assert "gpt-mm: 6 multimodal prompt(s) skipped_unsupported (openai takes no audio/wav)" in built.stderr
    n_image_queries = 3 * 3  # flickr30k, oven, msrvtt x (1 dev + 2 test)
    assert len(requests) == 2 * (5 * 3 + 2 * n_image_queries)  # two sizes: Gemini all, the others images
    for size in SIZES:
        garbled = query(
            database,
            f"select count(*) from loft_{size}.responses where raw_text like '%garbled%' or status <> 'ok'"
            " and status <> 'skipped_unsupported'",
        )
        assert garbled == [(0,)]
        metrics = query(
            database,
            f"select system, dataset, split, run_status, mean from loft_{size}.metrics where task = 'mm' "
            "and metric = 'recall@1' and rule = 'loft' and grain = 'turn' and source = 'dry_run' order by all",
        )
        expected = sorted(
            (system, dataset, split, *(("not_run", None) if system != "gemini-mm" and dataset in AUDIO else
                                       ("scored", 1.0 if split == "dev" else 0.5)))
            for system in SYSTEMS
            for dataset in mm_release.DATASETS
            for split in ("dev", "test")
        )  # fmt: skip
        assert metrics == expected
    # Gemini cached each dataset's prefix, media included; Claude wrote its image prefixes once and read them.
    cached = query(
        database,
        "select system, sum(cached_tokens) > 0, coalesce(sum(cache_write_tokens), 0) > 0 from loft_128k.responses "
        "where status = 'ok' and system <> 'gpt-mm' group by system order by system",
    )
    assert cached == [("claude-mm", True, True), ("gemini-mm", True, False)]
    # Before any call, the full-run estimate counts each system's media tokens by its rule, as
    # mm_cost_estimates does, and leaves out what the system cannot take.
    estimates = query(
        database,
        "select c.system, c.dataset, c.n_requests, c.input_tokens, m.n_requests, m.input_tokens "
        "from loft_32k.cost_estimates c join (select system, dataset, sum(n_requests) as n_requests, "
        "sum(input_tokens) as input_tokens from loft_32k.mm_cost_estimates where status = 'estimated' group by all) m "
        "using (system, dataset) where c.task = 'mm' and c.dataset in ('oven', 'fleurs_en_tts') order by all",
    )
    assert [row[:2] for row in estimates] == [
        ("claude-mm", "oven"), ("gemini-mm", "fleurs_en_tts"), ("gemini-mm", "oven"), ("gpt-mm", "oven"),
    ]  # fmt: skip
    assert all(row[2] == row[4] == 3 and row[3] == row[5] for row in estimates), estimates
    # The paper's FLEURS-en row (a transcript to a speech ID) pairs with the release's fleurs_en_tts.
    board = query(
        database,
        "select source, system, paper_dataset, value from loft_128k.leaderboard where dataset = 'fleurs_en_tts' "
        "and (source = 'paper' or split = 'test') order by source, system",
    )
    assert board == [
        ("dry_run", "gemini-mm", "FLEURS-en", 0.5),
        ("paper", "Gemini 1.5 Pro", "FLEURS-en", 1.0),
        ("paper", "Specialized", "FLEURS-en", 0.98),
    ]
