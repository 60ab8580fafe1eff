"""The operators a gold SQL query uses, read from its sqlglot tree (LOFT Figure 6).

LOFT bins Spider queries by the operators of their gold SQL and reports execution accuracy per
bin, grouping min and max into one bin and > and < into another (seed 000, §4.5, Figure 6).
A query falls in every bin whose operator it uses, so the bins overlap; a query that uses none
of them is `no_operator`. Comparisons count where they filter rows (WHERE, HAVING, a nested
query's filter), not in a join's ON condition, which pairs rows rather than asking a question
of them.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

# Bin name -> the sqlglot node types that put a query in it, in the order the mart lists them.
OPERATOR_BINS: dict[str, tuple[type[exp.Expr], ...]] = {
    "count": (exp.Count,),
    "sum": (exp.Sum,),
    "avg": (exp.Avg,),
    "min_max": (exp.Min, exp.Max),
    "equality": (exp.EQ,),
    "inequality": (exp.GT, exp.GTE, exp.LT, exp.LTE),
    "not_equal": (exp.NEQ,),
    "between": (exp.Between,),
    "like": (exp.Like, exp.ILike),
    "in": (exp.In,),
    "negation": (exp.Not,),
    "distinct": (exp.Distinct,),
    "group_by": (exp.Group,),
    "having": (exp.Having,),
    "order_by": (exp.Order,),
    "limit": (exp.Limit,),
    "join": (exp.Join,),
    "set_operation": (exp.Union, exp.Intersect, exp.Except),
}
NESTED = "nested"
NO_OPERATOR = "no_operator"
UNPARSABLE = "unparsable"
ALL_BINS: tuple[str, ...] = (*OPERATOR_BINS, NESTED, NO_OPERATOR, UNPARSABLE)
COMPARISONS = (exp.EQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NEQ)


def _in_join_condition(node: exp.Expr) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, exp.Join):
            return True
        if isinstance(parent, (exp.Where, exp.Having, exp.Select)):
            return False
        parent = parent.parent
    return False


def _is_nested(select: exp.Expr) -> bool:
    """A SELECT inside another query's SELECT (a subquery), not a branch of a set operation."""
    parent = select.parent
    while parent is not None:
        if isinstance(parent, exp.Select):
            return True
        parent = parent.parent
    return False


def gold_operators(sql: str | None) -> list[str]:
    """The bins of one SQL query (SQLite dialect, as Spider's gold is written), in ALL_BINS order.

    SQL sqlglot cannot parse is `unparsable` (a bin of its own, so such turns are counted, not
    dropped)."""
    if sql is None or not sql.strip():
        return [UNPARSABLE]
    try:
        trees = [tree for tree in sqlglot.parse(sql, read="sqlite") if tree is not None]
    except sqlglot.errors.SqlglotError:
        return [UNPARSABLE]
    if not trees:
        return [UNPARSABLE]
    found: set[str] = set()
    for tree in trees:
        for node in tree.walk():
            if isinstance(node, COMPARISONS) and _in_join_condition(node):
                continue
            for name, kinds in OPERATOR_BINS.items():
                if isinstance(node, kinds):
                    found.add(name)
            if isinstance(node, exp.Select) and _is_nested(node):
                found.add(NESTED)
    return [name for name in ALL_BINS if name in found] or [NO_OPERATOR]
