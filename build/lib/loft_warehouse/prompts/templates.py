"""The study and method prompt templates (templates.yaml): benchmark inputs kept as data."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import yaml

from loft_warehouse.errors import ConfigurationError

TEMPLATES_FILE = Path(__file__).with_name("templates.yaml")


@cache
def _all() -> dict[str, dict[str, str]]:
    with open(TEMPLATES_FILE, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def template(name: str) -> str:
    """The text of one template, exactly as templates.yaml holds it."""
    try:
        return _all()[name]["text"]
    except KeyError as exc:
        raise ConfigurationError(f"no prompt template {name!r} in {TEMPLATES_FILE}") from exc


def split_at(name: str, field: str, **values: object) -> tuple[str, str]:
    """A template filled in, cut where `{field}` stands: (text before, text after).

    The long part (documents, records, pages) is assembled by the caller, which stores it as
    reusable segments instead of one string per prompt.
    """
    marker = "\x00"
    filled = template(name).format(**{field: marker}, **values)
    if filled.count(marker) != 1:
        raise ConfigurationError(f"template {name!r} must hold {{{field}}} exactly once")
    before, _, after = filled.partition(marker)
    return before, after


def fill(text: str, /, **values: str) -> str:
    """A `{{field}}` template text (QUEST-LOFT's) filled in one pass, so a value that itself
    holds `{{...}}` stays as it is; every field given must occur."""
    missing = [field for field in values if "{{" + field + "}}" not in text]
    if missing:
        raise ConfigurationError(f"template has no {{{{{missing[0]}}}}}: {text[:60]!r}...")
    if not values:
        return text
    pattern = re.compile("|".join(re.escape("{{" + field + "}}") for field in values))
    return pattern.sub(lambda match: values[match.group(0)[2:-2]], text)


def with_bullet(text: str, bullet: str) -> str:
    """A QUEST-LOFT template with one more bullet after the last bullet of its instructions."""
    lines = text.split("\n")
    last = max(i for i, line in enumerate(lines) if line.startswith("* "))
    return "\n".join([*lines[: last + 1], bullet, *lines[last + 1 :]])
