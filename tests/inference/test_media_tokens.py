"""Media tokens per provider, against the worked examples of each provider's documentation and
hand-computed cases at the edges of each rule."""

from __future__ import annotations

import pytest

from loft_warehouse.inference.media_tokens import supported, tokens


@pytest.mark.parametrize(
    ("provider", "size", "expected"),
    [
        ("gemini", (384, 384), 258),  # both sides at most 384: one fixed count
        ("gemini", (512, 512), 258),  # LOFT's images: one 768 tile
        ("gemini", (1000, 500), 516),  # 2 x 1 tiles
        ("openai", (512, 512), 255),  # one 512 tile + 85
        ("openai", (1024, 1024), 765),  # OpenAI's example: scaled to 768x768, 4 tiles
        ("openai", (2048, 4096), 1105),  # OpenAI's example: 1024x2048, then 768x1536, 6 tiles
        ("anthropic", (512, 512), 350),  # 262,144 / 750 = 349.5, rounded up
        ("anthropic", (1000, 1000), 1334),
        ("anthropic", (3136, 1568), 1640),  # long edge scaled to 1568: 1568 x 784 / 750
    ],
)
def test_image_tokens_follow_each_providers_rule(provider: str, size: tuple[int, int], expected: int) -> None:
    assert tokens(provider, "image/jpeg", *size, None) == expected


def test_audio_is_counted_by_duration_where_it_is_taken() -> None:
    assert tokens("gemini", "audio/wav", None, None, 1000) == 32
    assert tokens("gemini", "audio/wav", None, None, 200) == 7  # 6.4 tokens, a part counts whole
    for provider in ("openai", "anthropic", "openai_compatible", "local", "bm25"):
        assert not supported(provider, "audio/wav")
    assert tokens("openai", "audio/wav", None, None, 1000) is None


def test_an_openai_compatible_server_takes_images_at_an_unknown_count() -> None:
    assert (
        supported("openai_compatible", "image/jpeg")
        and tokens("openai_compatible", "image/jpeg", 512, 512, None) is None
    )
    assert not supported("local", "image/jpeg")
