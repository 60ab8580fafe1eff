"""95% intervals for a mean score: Wilson for 0/1 scores, a percentile bootstrap otherwise.

The bootstrap resamples the counts of each distinct value (a multinomial draw), which is the
same distribution as resampling rows but costs O(distinct values) per replicate, so metrics
over a million rows stay cheap; with very many distinct values it falls back to the normal
approximation and says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Z_95 = 1.959963984540054
RESAMPLES = 2000
MAX_DISTINCT_FOR_BOOTSTRAP = 20_000


@dataclass(frozen=True)
class Interval:
    """Lower and upper bound and the method that produced them."""

    low: float
    high: float
    method: str


def wilson_interval(successes: float, n: int, z: float = Z_95) -> Interval:
    """Wilson score interval of a proportion (also sound when it is 0 or 1)."""
    if n <= 0:
        raise ValueError("a Wilson interval needs at least one observation")
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return Interval(max(0.0, centre - half), min(1.0, centre + half), "wilson")


def bootstrap_interval(values: Sequence[float], seed: int, resamples: int = RESAMPLES) -> Interval:
    """Percentile bootstrap interval of the mean, reproducible for a given seed."""
    distinct, counts = np.unique(np.asarray(values, dtype=float), return_counts=True)
    return counted_bootstrap_interval(distinct, counts, seed, resamples)


def counted_bootstrap_interval(
    distinct: npt.ArrayLike, counts: npt.ArrayLike, seed: int, resamples: int = RESAMPLES
) -> Interval:
    """bootstrap_interval from each distinct value (ascending) and how often it occurs: what SQL
    can aggregate without collecting or ordering a million rows."""
    values = np.asarray(distinct, dtype=float)
    weights = np.asarray(counts, dtype=np.int64)
    n = int(weights.sum())
    if n == 0:
        raise ValueError("a bootstrap interval needs at least one observation")
    if values.size > MAX_DISTINCT_FOR_BOOTSTRAP:
        mean = float(weights @ values) / n
        half = Z_95 * math.sqrt(float(weights @ (values - mean) ** 2) / (n - 1)) / math.sqrt(n) if n > 1 else 0.0
        return Interval(mean - half, mean + half, "normal")
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, weights / n, size=resamples)
    means = draws @ values / n
    low, high = np.quantile(means, [0.025, 0.975])
    return Interval(float(low), float(high), "bootstrap")


def mcnemar_exact_p(only_first: int, only_second: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test of the discordant pairs at 1/2
    (1.0 when no pair is discordant)."""
    discordant = only_first + only_second
    if discordant == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(only_first, discordant, 0.5).pvalue)
