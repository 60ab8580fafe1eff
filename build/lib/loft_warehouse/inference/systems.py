"""Systems under test, loaded from one documented YAML file (systems.yaml beside this module).

A system is a named (provider, model, generation settings, limits, prices, scope). Which
systems a build runs is a selection over that file; credentials come from the environment only
and are looked up at run time, never stored on the System object.
"""

from __future__ import annotations

import base64
import difflib
import os
import urllib.parse
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from loft_warehouse.errors import ConfigurationError
from loft_warehouse.inference.providers.registry import BATCH_PROVIDERS, PROVIDERS, ProviderKind
from loft_warehouse.model_tokens import PROVIDER_TOKENIZERS, parse_spec
from loft_warehouse.settings import PROJECT_ROOT

DEFAULT_SYSTEMS_FILE = Path(__file__).with_name("systems.yaml")
MODES = ("stream", "batch")
THINKING_EFFORTS = ("low", "medium", "high")
# Providers that take generation.thinking, and the forms each takes (budget: tokens; off; effort).
THINKING_FORMS = {
    "gemini": ("budget", "off", "effort"),
    "anthropic": ("budget", "off"),
    "openai": ("effort",),
    "openai_compatible": ("effort",),
}
# Anthropic's smallest thinking budget.
ANTHROPIC_MIN_THINKING = 1024
# A password in an endpoint URL shorter than this is masked only with its user name or as Basic auth.
MIN_LONE_SECRET = 4


@dataclass(frozen=True)
class Prices:
    """USD per million tokens; None means unknown (cost reported as null).

    cache_write is the price of a prompt token written to a cache (Anthropic: 1.25x input for
    the 5-minute cache); batch_ratio the factor a provider's batch API charges on every price."""

    input: float | None = None
    cached_input: float | None = None
    output: float | None = None
    cache_write: float | None = None
    batch_ratio: float | None = None


@dataclass(frozen=True)
class System:
    """One system under test, as configured."""

    name: str
    provider: str
    model: str
    generation: dict[str, Any] = field(default_factory=dict)
    api_key_env: str | None = None
    base_url: str | None = None
    base_url_env: str | None = None
    context_window: int = 0
    tokenizer: str | None = None
    concurrency: int = 1
    requests_per_minute: float = 0
    tokens_per_minute: float = 0
    max_attempts: int = 6
    timeout_s: float = 600
    backoff_initial_s: float = 1.0
    backoff_max_s: float = 60.0
    prices: Prices = Prices()
    expected_output_tokens: int = 64
    cache: dict[str, Any] = field(default_factory=dict)
    sizes: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()
    datasets: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)
    default: bool = True
    stream: bool = True
    mode: str = "stream"

    @property
    def kind(self) -> ProviderKind:
        """The system's provider, as registered (inference/providers/registry.py)."""
        return PROVIDERS[self.provider]

    @property
    def max_output_tokens(self) -> int:
        """Output cap sent with every request (and reserved out of the context window)."""
        return int(self.generation.get("max_output_tokens") or 0)

    @property
    def thinking(self) -> int | str | None:
        """generation.thinking as checked at load: a budget in tokens, 'off', an effort, or
        None (the model's own default)."""
        return self.generation.get("thinking")

    @property
    def expected_billed_output_tokens(self) -> int:
        """What an estimate prices per request as output: the expected answer plus the thinking
        the setting allows (a budget in full; an effort, up to the output cap), since every
        provider bills thinking as output."""
        if isinstance(self.thinking, int):
            return self.expected_output_tokens + self.thinking
        if self.thinking in THINKING_EFFORTS:
            return max(self.expected_output_tokens, self.max_output_tokens)
        return self.expected_output_tokens

    def api_key(self) -> str | None:
        """The key from the environment at call time (None when unset or empty)."""
        if not self.api_key_env:
            return None
        return os.environ.get(self.api_key_env) or None

    def scrub(self, text: str) -> str:
        """Text with the system's secrets masked (some servers echo what they were sent): its API
        key, and credentials in its endpoint (`http://user:secret@host`, which the HTTP client
        sends as Basic auth), as written, URL-decoded, and as the Basic auth value."""
        for secret in self.secrets():
            text = text.replace(secret, "***")
        return text

    def secrets(self) -> list[str]:
        """What `scrub` masks, longest first (a secret inside another is masked with it)."""
        found = [self.api_key() or ""]
        parts = urllib.parse.urlsplit(self.endpoint() or "")
        if parts.password or parts.username:
            userinfo = parts.netloc.rpartition("@")[0]
            user, password = urllib.parse.unquote(parts.username or ""), urllib.parse.unquote(parts.password or "")
            basic = base64.b64encode(f"{user}:{password}".encode()).decode()
            found += [userinfo, urllib.parse.unquote(userinfo), basic]
            # The password alone too, unless so short that masking it would mangle every message.
            found += [p for p in (password, parts.password or "") if len(p) >= MIN_LONE_SECRET]
        return sorted({secret for secret in found if secret}, key=len, reverse=True)

    def endpoint(self) -> str | None:
        """base_url_env when set, else base_url (None: the provider's public endpoint)."""
        if self.base_url_env and os.environ.get(self.base_url_env):
            return os.environ[self.base_url_env]
        return self.base_url

    def missing_credentials(self) -> list[str]:
        """Environment variables this system still needs; empty when it can run."""
        missing = []
        if self.api_key_env and not self.api_key():
            missing.append(self.api_key_env)
        if self.kind.needs_endpoint and not self.endpoint():
            missing.append(self.base_url_env or "base_url")
        return missing

    def applies(self, size: str, task: str, dataset: str, variant: str) -> bool:
        """Whether a prompt of this size/task/dataset/variant is in the system's scope."""
        return all(
            not allowed or value in allowed
            for allowed, value in (
                (self.sizes, size),
                (self.tasks, task),
                (self.datasets, dataset),
                (self.variants, variant),
            )
        )


def systems_file(configured: str | None = None) -> Path:
    """Resolve the systems file: explicit setting, then $LOFT_SYSTEMS_FILE, then the default."""
    value = (configured or "").strip() or os.environ.get("LOFT_SYSTEMS_FILE", "").strip()
    if not value:
        return DEFAULT_SYSTEMS_FILE
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = PROJECT_ROOT / path
    if not path.is_file():
        raise ConfigurationError(f"systems file {path} (from systems_file/LOFT_SYSTEMS_FILE) not found")
    return path


def _merge(defaults: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    merged = {**defaults, **entry}
    merged["generation"] = {**defaults.get("generation", {}), **entry.get("generation", {})}
    return merged


def _tokenizer(merged: dict[str, Any], where: str) -> str | None:
    """The system's `tokenizer`: as set, else its provider's own (local: gguf, gemini: gemini)."""
    provider = PROVIDERS[merged["provider"]]
    value = merged.get("tokenizer") or provider.tokenizer
    if not value:
        return None
    spec = parse_spec(value, where)
    if spec.kind in PROVIDER_TOKENIZERS and spec.kind != provider.tokenizer:
        needs = next(kind.name for kind in PROVIDERS.values() if kind.tokenizer == spec.kind)
        raise ConfigurationError(f"{where}: {spec} counts only for provider {needs}, not {provider.name}")
    return str(spec)


def _check_thinking(merged: dict[str, Any], where: str) -> None:
    """Refuse a thinking setting the system's provider or model cannot take, in one line."""
    value = merged["generation"].get("thinking")
    if value is None:
        return
    if isinstance(value, bool) or not (isinstance(value, int) or value == "off" or value in THINKING_EFFORTS):
        raise ConfigurationError(f"{where}: {value!r} is not a budget in tokens, off, or one of {THINKING_EFFORTS}")
    form = "budget" if isinstance(value, int) else "off" if value == "off" else "effort"
    provider = merged["provider"]
    forms = THINKING_FORMS.get(provider, ())
    if form not in forms:
        takes = " or ".join(forms) if forms else "no thinking setting"
        raise ConfigurationError(f"{where}: provider {provider} takes {takes}, not {value!r}")
    limit = int(merged["generation"].get("max_output_tokens") or 0)
    if form == "budget" and value < 0:
        raise ConfigurationError(f"{where}: a budget is a number of tokens >= 0, not {value}")
    if form == "budget" and limit and value >= limit:
        raise ConfigurationError(
            f"{where}: a budget of {value} leaves no room for the answer under max_output_tokens {limit}, "
            "which counts thinking too"
        )
    if provider == "anthropic" and form == "budget":
        if value < ANTHROPIC_MIN_THINKING:
            raise ConfigurationError(f"{where}: Anthropic takes a budget of at least {ANTHROPIC_MIN_THINKING} tokens")
        if merged["generation"].get("temperature") not in (None, 1):
            raise ConfigurationError(f"{where}: Anthropic thinks only at temperature 1; set generation.temperature: 1")


def thinking_name(name: str, value: int | str) -> str:
    """The name a system runs under when the `thinking` setting changes its thinking."""
    return f"{name}@thinking-{value}"


def with_thinking(systems: dict[str, System], value: Any) -> dict[str, System]:
    """The systems with the `thinking` setting applied: {system: budget | off | effort}, checked
    as generation.thinking is. A system given other thinking than its file's runs under
    thinking_name (its own request keys and runs, so two budgets of one model are two systems a
    paired comparison can set side by side); the mapping keeps it under its file name, so the
    `systems` and `batch` settings still name it that way."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return systems
    given = yaml.safe_load(value) if isinstance(value, str) else value
    if not isinstance(given, dict):
        raise ConfigurationError(f"thinking must map system names to a budget, off or an effort, got {value!r:.120}")
    unknown = [str(name) for name in given if name not in systems]
    if unknown:
        raise ConfigurationError(f"thinking: {unknown_systems(unknown, list(systems))}")
    changed = dict(systems)
    for name, setting in given.items():
        system = systems[name]
        generation = {**system.generation, "thinking": setting}
        _check_thinking({"provider": system.provider, "generation": generation}, f"thinking {name}")
        if setting != system.thinking:
            changed[name] = replace(system, name=thinking_name(name, setting), generation=generation)
    return changed


def _system(entry: dict[str, Any], defaults: dict[str, Any], path: Path, index: int) -> System:
    where = f"{path}: systems[{index}]"
    if not isinstance(entry, dict) or "name" not in entry:
        raise ConfigurationError(f"{where}: each system needs a name")
    merged = _merge(defaults, entry)
    if merged.get("provider") not in PROVIDERS:
        raise ConfigurationError(
            f"{where} ({entry['name']}): provider {merged.get('provider')!r} is not one of {tuple(PROVIDERS)}"
        )
    prices = merged.pop("prices", None) or {}
    unknown_prices = set(prices) - {"input", "cached_input", "output", "cache_write", "batch_ratio"}
    if unknown_prices:
        raise ConfigurationError(f"{where} ({entry['name']}): unknown price field(s) {sorted(unknown_prices)}")
    for key in ("sizes", "tasks", "datasets", "variants"):
        merged[key] = tuple(str(v) for v in merged.get(key) or ())
    merged.setdefault("model", merged["name"])
    if merged.get("mode", "stream") not in MODES:
        raise ConfigurationError(f"{where} ({entry['name']}): mode {merged['mode']!r} is not one of {MODES}")
    if merged.get("mode") == "batch" and merged["provider"] not in BATCH_PROVIDERS:
        raise ConfigurationError(
            f"{where} ({entry['name']}): mode batch needs a provider with a batch API {BATCH_PROVIDERS}, "
            f"not {merged['provider']}"
        )
    merged["tokenizer"] = _tokenizer(merged, f"{where} ({entry['name']}) tokenizer")
    _check_thinking(merged, f"{where} ({entry['name']}) generation.thinking")
    try:
        return System(prices=Prices(**prices), **merged)
    except TypeError as exc:
        raise ConfigurationError(f"{where} ({entry['name']}): {exc}") from exc


def load_systems(path: Path | None = None) -> dict[str, System]:
    """All configured systems by name, in file order; duplicates and bad fields raise."""
    path = path or DEFAULT_SYSTEMS_FILE
    with open(path, encoding="utf-8") as handle:
        document = yaml.safe_load(handle) or {}
    defaults = document.get("defaults", {}) or {}
    systems: dict[str, System] = {}
    for index, entry in enumerate(document.get("systems") or []):
        system = _system(entry, defaults, path, index)
        if system.name in systems:
            raise ConfigurationError(f"{path}: system {system.name!r} is defined twice")
        systems[system.name] = system
    return systems


def parse_selection(value: Any) -> list[str] | None:
    """A selection from a dbt var or env: list, comma string, or empty (None = the default)."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            loaded = yaml.safe_load(text)
            return parse_selection(loaded)
        names = [part.strip() for part in text.split(",") if part.strip()]
        return names or None
    if isinstance(value, list | tuple):
        names = [str(v).strip() for v in value if str(v).strip()]
        return names or None
    raise ConfigurationError(f"systems selection must be a list or comma-separated names, got {value!r}")


def unknown_systems(unknown: list[str], configured: list[str]) -> str:
    """The message for system names that are not configured, with the closest name for a typo."""
    hints = [
        f"{name!r}: did you mean {close[0]!r}?"
        for name in unknown
        if (close := difflib.get_close_matches(name, configured, n=1, cutoff=0.6))
    ]
    hint = f" ({'; '.join(hints)})" if hints else ""
    return f"unknown system(s) {unknown}{hint}; configured: {configured}"


def select(systems: dict[str, System], names: list[str] | None) -> list[System]:
    """The selected systems: named ones (unknown names raise), or every `default: true` one."""
    if names is None:
        return [s for s in systems.values() if s.default]
    unknown = [n for n in names if n not in systems]
    if unknown:
        raise ConfigurationError(unknown_systems(unknown, list(systems)))
    chosen = [systems[n] for n in dict.fromkeys(names)]
    planted = [s.name for s in chosen if s.kind.planted]
    if planted and len(planted) < len(chosen):
        raise ConfigurationError(
            f"{', '.join(planted)} (planted effects) runs in a build of its own: select it alone, "
            "with its own warehouse file (LOFT_DUCKDB_PATH)"
        )
    return chosen


def scope(prompts: pl.DataFrame, system: System, size: str) -> pl.DataFrame:
    """The prompt rows (task, dataset, variant columns) a system runs on at this size."""
    if system.sizes and size not in system.sizes:
        return prompts.clear()
    keep = pl.lit(True)
    for column, allowed in (
        ("task", system.tasks),
        ("dataset", system.datasets),
        ("variant", system.variants),
    ):
        if allowed:
            keep = keep & pl.col(column).is_in(list(allowed))
    return prompts.filter(keep)
