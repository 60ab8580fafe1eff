"""Input tokens of media parts, per provider, by the rules its documentation gives (media_tokens.yaml).

A provider counts an image by the pixels it receives: LOFT sends every image at 512x512
(sources.loft_mm), so that is the size counted. Audio is counted by its duration.
`supported` says whether a provider takes a modality at all (a system may add one its model
takes: `options.input_media`); `tokens` is None where it takes it but its count is not
documented (an OpenAI-compatible server, an added modality).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from loft_warehouse.errors import ConfigurationError
from loft_warehouse.sources.loft_mm import SENT_IMAGE_SIZE

RULES_FILE = Path(__file__).with_name("media_tokens.yaml")
MODALITIES = {"image/jpeg": "image", "audio/wav": "audio"}


@cache
def rules() -> dict[str, dict[str, Any]]:
    """Each provider's rule per modality (None: the modality is not taken)."""
    return yaml.safe_load(RULES_FILE.read_text(encoding="utf-8"))


def _rule(provider: str, mime_type: str) -> dict[str, Any] | None:
    modality = MODALITIES.get(mime_type)
    if modality is None:
        raise ConfigurationError(f"no token rule for media of type {mime_type!r}")
    return (rules().get(provider) or {}).get(modality)


def extra_modalities(name: str, options: Mapping[str, Any]) -> frozenset[str]:
    """A system's `options.input_media`: modalities its model takes beyond its provider's
    default (audio for an audio model behind the OpenAI API); their tokens are not documented
    here, so they count as text alone."""
    value = options.get("input_media") or []
    if isinstance(value, str) or not isinstance(value, list):
        raise ConfigurationError(f"system {name}: options.input_media must be a list such as [audio]")
    unknown = sorted(set(value) - set(MODALITIES.values()))
    if unknown:
        raise ConfigurationError(f"system {name}: options.input_media names {unknown}; known: image, audio")
    return frozenset(value)


def supported(provider: str, mime_type: str, extra: frozenset[str] = frozenset()) -> bool:
    """Whether a provider (with a system's extra modalities) takes media of this type."""
    return _rule(provider, mime_type) is not None or MODALITIES[mime_type] in extra


def _image(rule: dict[str, Any], width: int, height: int) -> int | None:
    kind = rule["rule"]
    if kind == "tiles":
        if width <= rule["small_side_px"] and height <= rule["small_side_px"]:
            return int(rule["small_tokens"])
        tile = rule["tile_px"]
        return math.ceil(width / tile) * math.ceil(height / tile) * int(rule["tile_tokens"])
    if kind == "openai_tiles":
        scale = min(1.0, rule["fit_px"] / max(width, height))
        width, height = width * scale, height * scale
        scale = min(1.0, rule["shortest_side_px"] / min(width, height))
        width, height = width * scale, height * scale
        tile = rule["tile_px"]
        return math.ceil(width / tile) * math.ceil(height / tile) * rule["tile_tokens"] + rule["base_tokens"]
    if kind == "pixels":
        scale = min(1.0, rule["long_edge_px"] / max(width, height))
        return math.ceil(round(width * scale) * round(height * scale) / rule["pixels_per_token"])
    return None


def sent_tokens(provider: str, media: Iterable[tuple[str, int | None]]) -> int | None:
    """Input tokens of media items as LOFT sends them ((mime type, audio duration ms) each;
    images at SENT_IMAGE_SIZE), summed; None when any count is unknown."""
    total = 0
    for mime_type, duration_ms in media:
        count = tokens(provider, mime_type, *SENT_IMAGE_SIZE, duration_ms)
        if count is None:
            return None
        total += count
    return total


def tokens(provider: str, mime_type: str, width: int | None, height: int | None, duration_ms: int | None) -> int | None:
    """Input tokens of one media item as sent (None: unknown, or the provider does not take it)."""
    rule = _rule(provider, mime_type)
    if rule is None:
        return None
    if MODALITIES[mime_type] == "image":
        return None if width is None or height is None else _image(rule, width, height)
    if rule["rule"] == "per_second" and duration_ms is not None:
        return math.ceil(duration_ms * rule["tokens_per_second"] / 1000)
    return None
