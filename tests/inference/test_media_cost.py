"""The multimodal cost estimate, on a hand-built prompt: text and media tokens apart, the prefix
cached once per split, and a provider without a modality skipped."""

from __future__ import annotations

import polars as pl
import pytest

from loft_warehouse.inference.media_cost import estimate
from loft_warehouse.inference.systems import Prices, System

PARTS = pl.DataFrame(
    [
        ("d", "prefix", None, None, 0, "text/plain", "instruction\n", None),
        ("d", "prefix", None, None, 1, "image/jpeg", None, "img1"),
        ("d", "prefix", None, None, 2, "image/jpeg", None, "img2"),
        ("d", "suffix", "test", "q1", 0, "text/plain", "start\n", None),
        ("d", "suffix", "test", "q1", 1, "audio/wav", None, "wav1"),
        ("d", "suffix", "test", "q2", 0, "text/plain", "start\n", None),
        ("d", "suffix", "test", "q2", 1, "text/plain", "query two\n", None),
    ],
    schema=["dataset", "section", "split", "qid", "part_index", "mime_type", "text", "media_sha256"],
    orient="row",
)
MEDIA = pl.DataFrame(
    [("d", "img1", "image/jpeg", None), ("d", "img2", "image/jpeg", None), ("d", "wav1", "audio/wav", 2000)],
    schema=["dataset", "sha256", "mime_type", "duration_ms"],
    orient="row",
)
PRICES = Prices(input=1.0, cached_input=0.25, output=4.0)


def _count(texts: list[str]) -> list[int]:
    return [len(text.split()) for text in texts]  # one token per word, to compute by hand


def _estimate(*systems: System) -> list[dict]:
    return estimate(PARTS, MEDIA, systems, lambda s: PRICES, _count, "32k").to_dicts()


def test_text_and_media_tokens_apart_and_the_prefix_cached_once() -> None:
    (row,) = _estimate(System("g", "gemini", "gemini-x", expected_output_tokens=10))
    # prefix: 1 word + 2 images x 258; q1: 1 word + 2 s of audio (64); q2: 3 words.
    assert (row["prefix_tokens"], row["text_tokens"], row["media_tokens"]) == (517, 2 * 1 + 1 + 3, 2 * 516 + 64)
    assert (row["n_requests"], row["input_tokens"], row["output_tokens"]) == (2, 1102, 20)
    assert row["cost_usd_no_cache"] == pytest.approx((1102 * 1.0 + 20 * 4.0) / 1e6)
    # with cache: the prefix once at 1.0, once at 0.25, the suffixes (1 + 64 + 3) at 1.0
    assert row["cost_usd_with_cache"] == pytest.approx((517 * 1.0 + 517 * 0.25 + 68 * 1.0 + 80) / 1e6)


def test_a_provider_without_the_datasets_audio_is_skipped_unsupported() -> None:
    (row,) = _estimate(System("o", "openai", "gpt-x"))
    assert (row["status"], row["unsupported_media"], row["input_tokens"], row["cost_usd_no_cache"]) == (
        "skipped_unsupported",
        "audio/wav",
        None,
        None,
    )


def test_a_system_scoped_away_from_mm_has_no_row() -> None:
    assert _estimate(System("r", "gemini", "gemini-x", tasks=("retrieval",))) == []
