"""`loft list systems|datasets|methods|variants|sizes|settings`: the names a build accepts, so a
setting can be written right the first time (every refusal of a name points here)."""

from __future__ import annotations

import argparse
from typing import Any

from loft_warehouse import registry, settings
from loft_warehouse.dbt_boundary.preflight import known_vars
from loft_warehouse.inference.warehouse import configured_systems
from loft_warehouse.methods.catalogue import METHODS
from loft_warehouse.prompts.variants import VARIANTS

KINDS = ("systems", "datasets", "methods", "variants", "sizes", "settings")
METHOD_PATTERNS = (
    "rag_top{k}",
    "rag_top{k}_justified[_cot][_quest][_verify]",
    "rag_top{k}_verify[_cot][_quest]",
    "reprompt*_r{tokens}, icr_k{pages}, chunked_icr_c{tokens}, ... (a method with its setting)",
)


def lines(kind: str) -> list[str]:
    """The names of one kind, one per line, with what a reader needs beside each."""
    if kind == "systems":
        systems = configured_systems(None).values()
        return [
            f"{s.name}\t{s.provider}\t{'default' if s.default else 'named only'}"
            f"\t{'key set' if not s.missing_credentials() else 'needs ' + ', '.join(s.missing_credentials())}"
            for s in systems
        ]
    if kind == "datasets":
        root = settings.data_dir()
        found: dict[str, list[str]] = {}
        for size in settings.SIZES:
            for spec in registry.specs_for_size(root, size, quiet=True):
                found.setdefault(f"{spec.task}/{spec.dataset}", []).append(size)
            for name in registry.multimodal_datasets(root, size):
                found.setdefault(name, []).append(size)
        studies = [f"{s.task}/{s.dataset}" for s in registry.specs() if s.study]
        return [f"{name}\t{', '.join(sizes)}" for name, sizes in sorted(found.items())] + [
            f"{name}\tnamed only (a positional study)" for name in studies
        ]
    if kind == "methods":
        return ["all", *METHODS, *METHOD_PATTERNS]
    if kind == "variants":
        return ["all", *VARIANTS]
    if kind == "sizes":
        return [f"loft_{size}\t{settings.SIZES[size].tokens} tokens" for size in settings.SIZES] + [
            "loft_compare\tacross sizes (LOFT Figure 5)"
        ]
    return list(known_vars())


def _run(args: argparse.Namespace) -> int:
    print("\n".join(lines(args.kind)))
    return 0


def register(subparsers: Any) -> None:
    """Add the `list` subcommand."""
    parser = subparsers.add_parser("list", help="the names a build accepts", description=__doc__)
    parser.add_argument("kind", choices=KINDS)
    parser.set_defaults(func=_run)
