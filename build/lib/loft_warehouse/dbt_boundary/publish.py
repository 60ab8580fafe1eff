"""Publish a successful build: analysts read a copy that a build never writes to.

dbt builds into the working file `<warehouse>.build` (profiles.yml); the `on-run-end` hook
(macros/publish.sql) calls `loft_publish` only when no node failed. It copies the checkpointed
working file beside the warehouse file (`$LOFT_DUCKDB_PATH`, default loft.duckdb) and renames it
over that file in one step. `LOFT_BUILD_IN_PLACE=1` builds the warehouse file itself (no copy,
none of the guarantees below). So the warehouse file is always one
whole successful build: a failed or killed build leaves the previous one untouched, a reader is
never locked out (the build holds only the working file), and a reader that has the old file open
keeps reading it until it reopens.

A failed or killed build also leaves the working file half new, half old. The `on-run-start` hook
marks the working file as unpublished (`begin_build`) and a publish clears the mark; dbt's next
run finds the mark before it opens the working file and starts from the published build
(`restore_unpublished`), so a partial selection (`--select <size>__int_imported_queries+`) can
never publish the killed build's tables beside the last good build's. A deleted working file
is started again from the published build, so deleting it between builds only frees disk.

DuckDB replays `<file>.wal` whenever it opens `<file>`, read-only too. A read-write session on
the warehouse file that died (a killed notebook or CLI session) leaves its WAL behind, which would
be replayed over the next published build: publish sets such a stale WAL aside first (renamed,
nothing deleted, said in its line) and refuses, in one line, while a session still holds the
warehouse file for writing.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from loft_warehouse.errors import ConfigurationError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: DuckDB's own lock still refuses a second writer
    fcntl = None  # type: ignore[assignment]


def _paths(working: str, published: str) -> tuple[Path, Path]:
    return Path(working).resolve(), Path(published).resolve()


def unpublished_marker(working: Path) -> Path:
    """The file that says `working` holds tables no publish has taken yet."""
    return working.with_name(working.name + ".unpublished")


# Linux's FICLONE ioctl: the copy shares the source's blocks until either is written (btrfs,
# XFS with reflink, bcachefs), so the working copy costs no disk until the next build.
FICLONE = 0x40049409


def _clone_or_copy(source: Path, target: Path) -> None:
    if fcntl is not None and sys.platform == "linux":
        with source.open("rb") as src, target.open("wb") as dst:
            try:
                fcntl.ioctl(dst.fileno(), FICLONE, src.fileno())
                return
            except OSError:
                pass  # ext4, overlayfs, tmpfs: no shared blocks, a plain copy below
    shutil.copyfile(source, target)


def _copy_durably(source: Path, target: Path) -> None:
    partial = target.with_name(f".{target.name}.{os.getpid()}.copying")
    try:
        _clone_or_copy(source, partial)
        with partial.open("rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


def publish(working: str, published: str) -> str:
    """Copy `working` (checkpointed, no writer active) over `published` atomically; one line back."""
    source, target = _paths(working, published)
    if source == target:
        return f"built in place: {target}"
    started = time.monotonic()
    if _written_by_another_process(target):
        raise ConfigurationError(
            f"not published: {target} is open for writing in another process (a notebook, a CLI session, "
            f"an in-place build); close it and run the build again ({target} still holds the last good build)"
        )
    set_aside = _set_aside_stale_wal(target)
    _copy_durably(source, target)
    unpublished_marker(source).unlink(missing_ok=True)
    size_mib = target.stat().st_size / 2**20
    line = f"published {target} ({size_mib:.1f} MiB in {time.monotonic() - started:.1f} s)"
    if set_aside is not None:
        line += f"; a write-ahead log left by a session that died on it was set aside as {set_aside}, not replayed"
    return line


def _written_by_another_process(path: Path) -> bool:
    """Whether a process holds `path`'s write lock (DuckDB's read-write open); readers hold only
    a shared lock, which a shared lock here does not wait for."""
    if fcntl is None or not path.exists():
        return False
    with path.open("rb") as handle:
        try:
            fcntl.lockf(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.lockf(handle, fcntl.LOCK_UN)
    return False


def working_file(published: Path, environ: Mapping[str, str]) -> Path:
    """The file dbt writes (profiles.yml): the warehouse file itself when built in place."""
    if environ.get("LOFT_BUILD_IN_PLACE", "") in ("1", "true"):
        return published
    return published.with_name(published.name + ".build")


def refuse_a_second_writer(working: Path) -> None:
    """Before a build starts: one line when its working file's folder cannot be written or
    another process writes that file, where DuckDB's open or lock error reached the user as a
    traceback from dbt's connection pool."""
    try:
        with tempfile.TemporaryFile(dir=working.parent):
            pass
    except OSError as exc:
        raise ConfigurationError(
            f"cannot write in {working.parent} ({exc.strerror}): a build writes {working.name} there, beside "
            "the published file; point LOFT_DUCKDB_PATH at a folder you can write"
        ) from exc
    if _written_by_another_process(working):
        raise ConfigurationError(
            f"another process is writing {working} (a build still running?); wait for it to end or stop it"
        )


def _set_aside_stale_wal(target: Path) -> Path | None:
    """Rename `target`'s WAL (its writer is gone: checked above) out of DuckDB's way, so that
    neither the new build nor a reader of the old one replays it; where it went, or None."""
    wal = target.with_name(target.name + ".wal")
    if not wal.exists():
        return None
    aside = wal.with_name(f"{wal.name}.stale-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}")
    os.replace(wal, aside)
    return aside


def begin_build(working: str, published: str) -> str:
    """Mark the working file unpublished before a run writes to it (cleared by `publish`)."""
    source, target = _paths(working, published)
    if source != target:
        started = time.strftime("%Y-%m-%d %H:%M:%S")
        unpublished_marker(source).write_text(f"build started {started} by pid {os.getpid()}\n")
    return ""


def _held_by_another_process(path: Path) -> bool:
    if fcntl is None or not path.exists():
        return False
    with path.open("rb+") as handle:
        try:
            fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.lockf(handle, fcntl.LOCK_UN)
    return False


def restore_unpublished(working: str, published: str) -> str | None:
    """Before dbt opens `working`: if the last run on it did not publish, replace it with the
    published build (or remove it when nothing is published yet); if it was deleted, start it
    again from the published build. One line back, None when there was nothing to do. A
    working file another process holds is left to DuckDB's lock."""
    source, target = _paths(working, published)
    marker = unpublished_marker(source)
    if source == target:
        return None
    if not source.exists() and not marker.exists() and target.exists():
        _copy_durably(target, source)
        return f"no working copy {source}; starting from the published build {target}"
    if not marker.exists() or _held_by_another_process(source):
        return None
    source.with_name(source.name + ".wal").unlink(missing_ok=True)
    if target.exists():
        _copy_durably(target, source)
        line = f"the last build on {source} did not publish; starting from the published build {target}"
    else:
        source.unlink(missing_ok=True)
        line = f"the last build on {source} did not publish and nothing is published yet; starting empty"
    marker.unlink()
    return line
