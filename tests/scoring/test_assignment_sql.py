"""scoring_all_golds_assigned (the multi-answer subspan_em's one-to-one matching, decided in SQL
where the matches settle it) against metrics.assigned_matches, LOFT's linear sum assignment."""

from __future__ import annotations

import random

import pytest

from loft_warehouse.scoring.metrics import assigned_matches
from tests.scoring.sqlkit import connect, macros

# Short strings that contain one another often: many golds share predictions.
PIECES = ["a", "ab", "abc", "b", "bc", "c", "ca", "cab", "x"]


def _decided(pairs: list[tuple[list[str], list[str]]]) -> tuple[list[bool], int]:
    """The macro's verdict for each (golds, preds), and how many the Python solver was asked."""
    calls = 0

    def counted(golds: list[str], preds: list[str]) -> int:
        nonlocal calls
        calls += 1
        return assigned_matches(golds, preds)

    m = macros()
    con = connect()
    con.remove_function("loft_assigned_matches")
    con.create_function("loft_assigned_matches", counted, ["VARCHAR[]", "VARCHAR[]"], "BIGINT")
    sql = f"""
        select {m.scoring_all_golds_assigned("matches", "golds", "preds")}
        from (select i, golds, preds, {m.scoring_match_lists("golds", "preds")} as matches
              from (select unnest($golds) as golds, unnest($preds) as preds, unnest(range(len($golds))) as i))
        order by i
    """
    golds, preds = [g for g, _ in pairs], [p for _, p in pairs]
    rows = con.execute(sql, {"golds": golds, "preds": preds}).fetchall()
    return [row[0] for row in rows], calls


@pytest.mark.parametrize(
    ("golds", "preds", "expected"),
    [
        (["ab", "a"], ["ab", "abc"], True),  # both golds match both predictions: one each
        (["a", "b", "ab"], ["ab"], False),  # three golds, one matched prediction
        (["x", "a"], ["a", "b"], False),  # a gold matching nothing
        (["a", "a"], ["a"], False),  # a repeated gold needs a second prediction
        (["a", "b"], ["xa", "yb"], True),  # no prediction matches two golds
        ([], ["a"], True),  # an empty gold list is fully assigned (upstream)
    ],
)
def test_hand_computed_assignments(golds: list[str], preds: list[str], expected: bool) -> None:
    assert (assigned_matches(golds, preds) == len(golds)) == expected
    assert _decided([(golds, preds)])[0] == [expected]


def test_sql_decides_as_the_linear_sum_assignment_and_leaves_few_to_python() -> None:
    rng = random.Random(20240612)
    pairs = [
        ([rng.choice(PIECES) for _ in range(rng.randint(1, 5))], [rng.choice(PIECES) for _ in range(rng.randint(1, 6))])
        for _ in range(3000)
    ]
    verdicts, calls = _decided(pairs)
    expected = [assigned_matches(golds, preds) == len(golds) for golds, preds in pairs]
    mismatches = [(pair, got) for pair, got, want in zip(pairs, verdicts, expected, strict=True) if got != want]
    assert not mismatches, mismatches[:5]
    assert 0 < sum(expected) < len(pairs)
    # The Python solver is still reached, for the cases the SQL rules leave open, and only for those.
    assert 0 < calls < len(pairs) // 20
