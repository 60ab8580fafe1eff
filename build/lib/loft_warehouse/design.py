"""What a size builds besides its data: prompt variants, methods and the studies' sweeps.

Every field is a dbt var (dbt_project.yml passes them to the Python models in the `loft`
config); the defaults reproduce the papers' settings:

| var | default | meaning |
|---|---|---|
| prompt_variants | [default] | LOFT prompt variants (prompts.variants) |
| methods | [cic] | methods (methods.catalogue) |
| litm_documents | [10, 20, 30] | Lost in the Middle: documents per prompt |
| litm_positions | paper's | gold indices; default 0, 4, 9, ... k-1 |
| kv_positions | paper's | queried-key indices; default the quarter points 0 .. n-1 |
| rr_lengths | [10000, 20000, 40000, 80000] | R&R document lengths d (content tokens) that fit the size |
| rr_step | 10000 | R&R answer positions x = 0, step, 2 step, ... <= d |
| reprompt_every | 10000 | tokens between instruction reminders (reprompt, r_and_r) |
| icr_pages | 5 | pages ICR asks for (k) |
| chunk_tokens | 10000 | chunk size of chunked_icr (c) |
| verify_candidates | 5 | candidates per question assumed by the cost estimate of verification |
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from loft_warehouse.errors import ConfigurationError
from loft_warehouse.methods import catalogue
from loft_warehouse.methods.catalogue import Method
from loft_warehouse.prompts import variants as variant_catalogue
from loft_warehouse.prompts.variants import Variant


def parse_list(value: Any, name: str) -> list[Any] | None:
    """A list setting as dbt renders it: a list, a rendered list ("[10, 20]"), a comma string,
    or empty (None: the default)."""
    if value is None:
        return None
    if isinstance(value, list | tuple):
        return list(value)
    text = str(value).strip()
    if not text or text.lower() in ("none", "null"):
        return None
    if text.startswith("["):
        try:
            loaded = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigurationError(f"{name}: cannot read {text!r} as a list") from exc
        return list(loaded or [])
    return [part.strip() for part in text.split(",") if part.strip()]


def _ints(value: Any, name: str, minimum: int = 0) -> tuple[int, ...] | None:
    items = parse_list(value, name)
    if items is None:
        return None
    try:
        numbers = tuple(int(item) for item in items)
    except (TypeError, ValueError) as exc:
        raise ConfigurationError(f"{name} must be a list of integers, got {value!r}") from exc
    if any(n < minimum for n in numbers):
        raise ConfigurationError(f"{name} values must be >= {minimum}, got {list(numbers)}")
    return numbers


def _int(value: Any, name: str, default: int, minimum: int = 1) -> int:
    if value is None or str(value).strip() in ("", "None", "none"):
        return default
    try:
        number = int(value)
    except (TypeError, ValueError) as exc:
        raise ConfigurationError(f"{name} must be an integer, got {value!r}") from exc
    if number < minimum:
        raise ConfigurationError(f"{name} must be >= {minimum}, got {number}")
    return number


@dataclass(frozen=True)
class Design:
    """The settings that decide which prompt rows a size builds (see the module docstring)."""

    variants: tuple[Variant, ...] = field(default_factory=lambda: (variant_catalogue.VARIANTS["default"],))
    methods: tuple[Method, ...] = field(default_factory=lambda: (catalogue.METHODS["cic"],))
    litm_documents: tuple[int, ...] = (10, 20, 30)
    litm_positions: tuple[int, ...] | None = None
    kv_positions: tuple[int, ...] | None = None
    rr_lengths: tuple[int, ...] = (10_000, 20_000, 40_000, 80_000)
    rr_step: int = 10_000
    reprompt_every: int = 10_000
    icr_pages: int = 5
    chunk_tokens: int = 10_000
    verify_candidates: int = 5

    @classmethod
    def from_config(cls, config: dict[str, Any] | None, variant_names: Any = None) -> Design:
        """The design from the `loft` config of a dbt model (unset keys keep the defaults)."""
        config = config or {}
        base = cls()
        names = parse_list(variant_names, "prompt_variants")
        return cls(
            variants=tuple(variant_catalogue.resolve(names)),
            methods=tuple(catalogue.resolve(parse_list(config.get("methods"), "methods"))),
            litm_documents=_ints(config.get("litm_documents"), "litm_documents", 1) or base.litm_documents,
            litm_positions=_ints(config.get("litm_positions"), "litm_positions"),
            kv_positions=_ints(config.get("kv_positions"), "kv_positions"),
            rr_lengths=_ints(config.get("rr_lengths"), "rr_lengths", 1) or base.rr_lengths,
            rr_step=_int(config.get("rr_step"), "rr_step", base.rr_step),
            reprompt_every=_int(config.get("reprompt_every"), "reprompt_every", base.reprompt_every),
            icr_pages=_int(config.get("icr_pages"), "icr_pages", base.icr_pages),
            chunk_tokens=_int(config.get("chunk_tokens"), "chunk_tokens", base.chunk_tokens),
            verify_candidates=_int(config.get("verify_candidates"), "verify_candidates", base.verify_candidates),
        )

    def key(self) -> tuple:
        """A hashable summary (for memoising built prompt tables)."""
        return (
            tuple(v.name for v in self.variants),
            tuple(m.name for m in self.methods),
            self.litm_documents,
            self.litm_positions,
            self.kv_positions,
            self.rr_lengths,
            self.rr_step,
            self.reprompt_every,
            self.icr_pages,
            self.chunk_tokens,
        )
