"""Keep the per-size dbt folders identical: models/loft_128k/ is the template of every size.

dbt selects `--select loft_32k` by top-level folder and never adds upstream nodes, so each size
needs its own copy of every (thin) model file; the logic lives in macros and this package.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from loft_warehouse.settings import PROJECT_ROOT, SIZES

TEMPLATE = "128k"


def _expected(models_dir: Path, size_label: str) -> dict[Path, str]:
    template = models_dir / f"loft_{TEMPLATE}"
    files: dict[Path, str] = {}
    for path in sorted(template.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            relative = Path(str(path.relative_to(template)).replace(f"loft_{TEMPLATE}", f"loft_{size_label}"))
            files[relative] = path.read_text(encoding="utf-8").replace(f"loft_{TEMPLATE}", f"loft_{size_label}")
    return files


def differences(models_dir: Path = PROJECT_ROOT / "models") -> list[str]:
    """Files that differ from what the template implies, as readable lines."""
    problems = []
    for label in SIZES:
        if label == TEMPLATE:
            continue
        folder = models_dir / f"loft_{label}"
        expected = _expected(models_dir, label)
        actual = (
            {
                p.relative_to(folder): p.read_text(encoding="utf-8")
                for p in folder.rglob("*")
                if p.is_file() and "__pycache__" not in p.parts
            }
            if folder.is_dir()
            else {}
        )
        for relative in sorted(set(expected) | set(actual)):
            if expected.get(relative) != actual.get(relative):
                problems.append(f"models/loft_{label}/{relative} is out of sync with loft_{TEMPLATE}")
    return problems


def sync(models_dir: Path = PROJECT_ROOT / "models") -> None:
    """Rewrite every non-template size folder from the template."""
    for label in SIZES:
        if label == TEMPLATE:
            continue
        folder = models_dir / f"loft_{label}"
        shutil.rmtree(folder, ignore_errors=True)
        for relative, text in _expected(models_dir, label).items():
            target = folder / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")


def _run(args: argparse.Namespace) -> int:
    if args.check:
        problems = differences()
        print("\n".join(problems) or "size folders in sync")
        return 1 if problems else 0
    sync()
    print(f"models/loft_*/ rewritten from models/loft_{TEMPLATE}/")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """`loft sync-sizes [--check]`."""
    parser = subparsers.add_parser("sync-sizes", help="copy models/loft_128k to the other sizes")
    parser.add_argument("--check", action="store_true", help="only report differences")
    parser.set_defaults(func=_run)
