"""The `loft` command: each area of the package contributes its subcommands."""

from __future__ import annotations

import argparse
import importlib
import sys

from loft_warehouse.errors import BadInputError, ConfigurationError

# Each module exposes register(subparsers) adding its subcommands with set_defaults(func=...).
COMMAND_MODULES: list[str] = [
    "loft_warehouse.dbt_boundary.build",
    "loft_warehouse.dbt_boundary.forget",
    "loft_warehouse.listing",
    "loft_warehouse.size_models",
    "loft_warehouse.quality",
    "loft_warehouse.prompts.export",
    "loft_warehouse.scoring.importer",
    "loft_warehouse.scoring.import_sql",
    "loft_warehouse.inference.cli",
    "loft_warehouse.dashboard.serve",
]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every area's subcommands."""
    parser = argparse.ArgumentParser(prog="loft", description=__doc__)
    subparsers = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `loft` console script; bad input, settings and a file that cannot be
    opened end with one clear line."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown and not getattr(args, "passes_unknown_arguments", False):
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    args.unknown_arguments = unknown
    try:
        return int(args.func(args) or 0)
    except (BadInputError, ConfigurationError) as exc:
        print(f"loft {args.command}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        if exc.filename is None:
            raise
        print(f"loft {args.command}: {exc.strerror}: {exc.filename}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
