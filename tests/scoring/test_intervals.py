"""95% intervals of a mean score."""

from __future__ import annotations

import math

import pytest

from loft_warehouse.scoring import intervals
from loft_warehouse.scoring.intervals import bootstrap_interval, counted_bootstrap_interval, wilson_interval


def test_wilson_matches_the_textbook_value() -> None:
    # 8 of 10: centre (0.8 + z^2/20) / (1 + z^2/10), half-width z*sqrt(0.016 + z^2/400) / (1 + z^2/10)
    interval = wilson_interval(8, 10)
    assert (interval.low, interval.high) == pytest.approx((0.4902, 0.9433), abs=1e-4)
    assert interval.method == "wilson"


def test_wilson_is_not_degenerate_at_zero_and_one() -> None:
    assert wilson_interval(0, 5).low == 0.0
    assert wilson_interval(0, 5).high == pytest.approx(1.959964**2 / 5 / (1 + 1.959964**2 / 5))
    assert wilson_interval(5, 5).high == 1.0
    with pytest.raises(ValueError):
        wilson_interval(0, 0)


def test_bootstrap_of_two_values_spans_them() -> None:
    # resampled means of [0, 1] are 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4
    interval = bootstrap_interval([0.0, 1.0], seed=1)
    assert (interval.low, interval.high, interval.method) == (0.0, 1.0, "bootstrap")


def test_bootstrap_of_constant_values_is_a_point() -> None:
    assert bootstrap_interval([0.5] * 7, seed=3) == intervals.Interval(0.5, 0.5, "bootstrap")


def test_bootstrap_is_reproducible_and_brackets_the_mean() -> None:
    values = [0.0, 0.25, 0.5, 0.5, 1.0, 0.75, 0.5, 0.0]
    first = bootstrap_interval(values, seed=11)
    assert first == bootstrap_interval(values, seed=11)
    assert first.low < sum(values) / len(values) < first.high
    with pytest.raises(ValueError):
        bootstrap_interval([], seed=1)


def test_counted_bootstrap_is_the_bootstrap_of_the_rows_it_counts() -> None:
    values = [0.0, 0.25, 1 / 3, 0.5, 0.5, 1.0, 0.75, 0.0, 0.2]
    distinct = sorted(set(values))
    counts = [values.count(value) for value in distinct]
    # what bootstrap_interval returned from the rows before the metrics aggregated counts instead
    expected = intervals.Interval(0.19814814814814813, 0.5929166666666649, "bootstrap")
    assert bootstrap_interval(values, seed=11) == expected
    assert counted_bootstrap_interval(distinct, counts, seed=11) == expected
    with pytest.raises(ValueError):
        counted_bootstrap_interval([], [], seed=1)


def test_many_distinct_values_fall_back_to_the_normal_approximation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(intervals, "MAX_DISTINCT_FOR_BOOTSTRAP", 2)
    interval = bootstrap_interval([0.0, 0.5, 1.0], seed=1)
    half = intervals.Z_95 * 0.5 / math.sqrt(3)  # sample sd of 0, 0.5, 1 is 0.5
    assert interval == intervals.Interval(pytest.approx(0.5 - half), pytest.approx(0.5 + half), "normal")
