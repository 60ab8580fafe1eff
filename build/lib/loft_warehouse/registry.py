"""The dataset registry: which LOFT datasets exist, where they come from, and their split sizes."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from loft_warehouse.errors import ConfigurationError, did_you_mean

REGISTRY_FILE = Path(__file__).with_name("datasets.yaml")
RELEASE_TASKS = ("retrieval", "rag", "sql", "icl")
# Tasks whose answers are document IDs, scored by recall: LOFT's evaluator scores mm with its
# retrieval evaluation (evaluation.EVALUATION_TASKS["mm"]).
ID_TASKS = frozenset({"retrieval", "mm"})
RELEASE_CORPUS_FILES = ("corpus.jsonl", "corpus.json")
# LOFT's RAG datasets whose questions have several answers, all required (its multi_value_rag).
MULTI_ANSWER_DATASETS = frozenset({"qampari", "quest"})


@dataclass(frozen=True)
class DatasetSpec:
    """One dataset of one task, as the warehouse builds it."""

    task: str
    dataset: str
    source: str
    source_name: str | None = None
    has_title: bool = True
    max_gold: int | None = None
    sizes: tuple[str, ...] = ("32k", "128k", "1m")
    no_test_at: tuple[str, ...] = ("32k",)
    splits: dict[str, int] = field(default_factory=lambda: {"few_shot": 5, "dev": 10, "test": 100})
    contexts: tuple[str, ...] = ()
    study: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    multi_answer: bool = False

    def split_sizes(self, size_label: str) -> dict[str, int]:
        """Split sizes at one benchmark size (no test split where the paper has none)."""
        sizes = dict(self.splits)
        if size_label in self.no_test_at:
            sizes["test"] = 0
        return sizes


def _spec(entry: dict[str, Any], defaults: dict[str, Any]) -> DatasetSpec:
    merged = {**defaults, **entry}
    merged["splits"] = {**defaults.get("splits", {}), **entry.get("splits", {})}
    merged["options"] = dict(entry.get("options") or {})
    for key in ("sizes", "no_test_at", "contexts"):
        merged[key] = tuple(merged.get(key) or ())
    try:
        return DatasetSpec(**merged)
    except TypeError as exc:
        raise ConfigurationError(f"{REGISTRY_FILE}: bad entry {entry}: {exc}") from exc


@cache
def specs(registry_file: Path = REGISTRY_FILE) -> tuple[DatasetSpec, ...]:
    """All registered datasets, in registry order."""
    with open(registry_file, encoding="utf-8") as handle:
        document = yaml.safe_load(handle)
    defaults = document.get("defaults", {})
    return tuple(_spec(entry, defaults) for entry in document["datasets"])


def release_dir(root: Path, task: str, dataset: str, size_label: str) -> Path:
    """Folder of the official release files for one dataset and size."""
    return root / "loft" / task / dataset / size_label


def released_specs(root: Path, size_label: str) -> list[DatasetSpec]:
    """Datasets present in the release layout for this size, registered or not."""
    known = {(s.task, s.dataset): s for s in specs()}
    found: list[DatasetSpec] = []
    base = root / "loft"
    for task in RELEASE_TASKS:
        task_dir = base / task
        if not task_dir.is_dir():
            continue
        for dataset_dir in sorted(p for p in task_dir.iterdir() if p.is_dir()):
            folder = dataset_dir / size_label
            if not folder.is_dir():
                continue
            if not any((folder / name).is_file() for name in RELEASE_CORPUS_FILES):
                print(f"WARNING: {folder} has no corpus file; {task}/{dataset_dir.name} is not built at {size_label}")
                continue
            spec = known.get((task, dataset_dir.name))
            if spec is None:
                multi = task == "rag" and dataset_dir.name in MULTI_ANSWER_DATASETS
                spec = DatasetSpec(task=task, dataset=dataset_dir.name, source="loft_release", multi_answer=multi)
            found.append(replace(spec, source="loft_release"))
    return found


def multimodal_datasets(root: Path, size_label: str) -> list[str]:
    """The release's mm/{dataset} folders at this size (media_tables builds them)."""
    task_dir = root / "loft" / "mm"
    if not task_dir.is_dir():
        return []
    return [f"mm/{p.name}" for p in sorted(task_dir.iterdir()) if (p / size_label).is_dir()]


def parse_selection(only: str | list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """Normalise a dataset selection ("retrieval/nq,icl/bbh_date" or a list) to sorted names."""
    if not only:
        return ()
    items = only.split(",") if isinstance(only, str) else list(only)
    if not all(isinstance(item, str) for item in items):
        raise ConfigurationError(f"datasets must be a name or a list of names, got {only!r:.120}")
    return tuple(sorted({item.strip() for item in items if item.strip()}))


def is_selected(name: str, only: tuple[str, ...]) -> bool:
    """Whether "task/dataset" is named in a selection, directly or by "task/*"."""
    return name in only or f"{name.partition('/')[0]}/*" in only


def specs_for_size(
    root: Path, size_label: str, only: tuple[str, ...] = (), *, quiet: bool = False
) -> list[DatasetSpec]:
    """What one size builds: released datasets as released, the rest from raw sources.

    A dataset present in the release for this size is never rebuilt from raw data; a registered
    release dataset with no files there is listed in one line. A data folder without raw/ builds
    its release datasets and skips the raw-sourced ones, saying so in one line (naming one of
    them is an error). `only` restricts the build to "task/dataset" names ("task/*" names a whole
    task family); a name that matches nothing is an error. Study datasets (the positional
    studies: `study: true` in the registry) are built only when named.
    """
    chosen = {(s.task, s.dataset): s for s in released_specs(root, size_label)}
    multimodal = multimodal_datasets(root, size_label)
    if multimodal and not quiet:
        print(
            f"multimodal at {size_label}: {', '.join(multimodal)} in {root / 'loft'} are landed and rendered "
            f"(loft_{size_label.lower()}__stg_mm_media, __mm_prompt_parts) as prompts of task mm, sent with "
            "their media to the systems that take them"
        )
    raw = [s for s in specs() if s.source != "loft_release" and size_label in s.sizes]
    has_raw = (root / "raw").is_dir()
    for spec in raw if has_raw else ():
        chosen.setdefault((spec.task, spec.dataset), spec)
    names = {f"{task}/{dataset}": spec for (task, dataset), spec in chosen.items()}
    skipped = sorted({f"{s.task}/{s.dataset}" for s in raw if not s.study} - set(names))
    if not only:
        absent = sorted(
            f"{s.task}/{s.dataset}"
            for s in specs()
            if s.source == "loft_release" and size_label in s.sizes and (s.task, s.dataset) not in chosen
        )
        if absent and not quiet:
            print(f"declared, no files at {size_label} in {root / 'loft'}: {', '.join(absent)}")
        if skipped and not quiet:
            print(
                f"no raw/ in {root}: building the release datasets only; skipped at {size_label}: {', '.join(skipped)}"
            )
        return [spec for spec in chosen.values() if not spec.study]
    families = {f"{name.partition('/')[0]}/*" for name in names}
    unraw = sorted(set(only) & {f"{s.task}/{s.dataset}" for s in raw} - set(names))
    if unraw:
        raise ConfigurationError(f"datasets {unraw} are built from raw sources, but {root} has no raw/ folder")
    unknown = set(only) - set(names) - families - set(multimodal) - {"mm/*"}
    if unknown:
        hints = "".join(did_you_mean(name, [*names, *multimodal]) for name in sorted(unknown))
        raise ConfigurationError(
            f"datasets {sorted(unknown)} are not built at size {size_label}{hints}; "
            f"known: {sorted(names)} (or a whole family: {sorted(families)}; `loft list datasets` prints them)"
        )
    return [spec for name, spec in names.items() if is_selected(name, only)]
