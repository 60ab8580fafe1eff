"""Publish a successful build: analysts read a copy that a build never writes to.

dbt builds into the working file `<warehouse>.build` (profiles.yml); the `on-run-end` hook
(macros/publish.sql) calls `loft_publish` only when no node failed. It copies the checkpointed
working file beside the warehouse file (`$LOFT_DUCKDB_PATH`, default loft.duckdb) and renames it
over that file in one step. `LOFT_BUILD_IN_PLACE=1` builds the warehouse file itself (no copy,
none of the guarantees below). So the warehouse file is always one
whole successful build: a failed or killed build leaves the previous one untouched, a reader is
never locked out (the build holds only the working file), and a reader that has the old file open
keeps reading it until it reopens.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path


def publish(working: str, published: str) -> str:
    """Copy `working` (checkpointed, no writer active) over `published` atomically; one line back."""
    source, target = Path(working).resolve(), Path(published).resolve()
    if source == target:
        return f"built in place: {target}"
    started = time.monotonic()
    partial = target.with_name(f".{target.name}.{os.getpid()}.publishing")
    try:
        shutil.copyfile(source, partial)
        with partial.open("rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    size_mib = target.stat().st_size / 2**20
    return f"published {target} ({size_mib:.1f} MiB in {time.monotonic() - started:.1f} s)"
