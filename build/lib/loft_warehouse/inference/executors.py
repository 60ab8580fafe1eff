"""Who answers a system's prompt rows: the system itself, or a stage's non-model step (bm25's
top k), which cost estimates and runs both look up."""

from __future__ import annotations

import polars as pl

from loft_warehouse.inference.systems import System
from loft_warehouse.methods.catalogue import method


def step_system(top_k: int) -> System:
    """The non-model step a stage runs instead of the system under test: bm25's top k (its
    responses are stored under this name, so every system reading them shares one)."""
    return System(name=f"bm25-top{top_k}", provider="bm25", model="bm25s", options={"top_k": top_k}, concurrency=1)


def executors(system: System, rows: pl.DataFrame) -> list[tuple[System, pl.DataFrame]]:
    """Who answers a system's rows: the system itself, or the non-model step of a stage."""
    steps = {}
    for name, stage in rows.select("method", "stage").unique().iter_rows():
        chosen = method(name)
        if chosen.stage(stage).executor == "bm25":
            steps[(name, stage)] = step_system(chosen.top_k or 1)
    if not steps:
        return [(system, rows)]
    is_step = pl.struct("method", "stage").is_in([{"method": m, "stage": s} for m, s in steps])
    found = [(system, rows.filter(~is_step))] if rows.filter(~is_step).height else []
    for (name, stage), step in steps.items():
        found.append((step, rows.filter((pl.col("method") == name) & (pl.col("stage") == stage))))
    return found
