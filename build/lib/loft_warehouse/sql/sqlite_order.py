"""SQLite's implicit row order, written out as explicit ORDER BY terms for DuckDB.

Spider's gold results come from SQLite. Which of several rows tied on the ORDER BY keys a LIMIT
keeps, and which row a bare column of an aggregate query shows, follow from how SQLite runs a
query over these tables (loaded without keys or indexes, so every table is a plain rowid table):

- the sorter is stable: rows tied on the ORDER BY keys keep the order in which they reach it;
- a table is scanned in rowid order, which is the dump's row order (the loaders insert rows in
  dump order in both engines; DuckDB's `rowid` of a base table is that insertion order);
- a join is a nested loop whose order the planner picks without statistics (`loop_order`). A
  table that an equality (a join or a constant) can search goes inside, through an automatic
  covering index; one that none can search is scanned in full, and the unavoidable scans go
  outermost. The outermost table is, of those leaving the fewest scans, the one whose own WHERE
  terms keep the fewest rows by SQLite's estimate (after its constant propagation), the first
  in FROM order on a tie; the others follow in FROM order as searches reach them. The right
  table of a LEFT JOIN follows every table before it. The rows of one search come ordered by
  the table's used columns (in declaration order), then rowid; a scan gives rowid order;
- GROUP BY sorts the rows on the group keys (stably), so groups reach ORDER BY in key order:
  each key ascending, or, when ORDER BY has as many terms as GROUP BY, in the direction of the
  ORDER BY term at the same position; NULL sorts lowest;
- a bare column of an aggregate query comes from the first row of its group in that input
  order, or, with a single min()/max(), from the first row holding the extreme (from the last
  row when the min()/max() argument is NULL on every row of the group).

`sqlite_row_order` writes this out: tie-breaking terms appended to the ORDER BY of every SELECT
with a LIMIT and of the top-level SELECT (a LIMIT without ORDER BY gets the implicit order as
its ORDER BY), and each bare column (ANY_VALUE / ARG_MIN / ARG_MAX from the rewrite) as
FIRST(column ORDER BY extreme, input order) (LAST(column ORDER BY input order) for an all-NULL
extreme). It leaves alone what it cannot order this way: SELECTs reading a subquery or CTE (no
rowid), DISTINCT SELECTs (DuckDB orders them only by selected columns), set operations, and a
table with a column named rowid. sqlglot reads `a CROSS JOIN b` and `a, b` alike, so an
explicit CROSS JOIN (which SQLite never reorders) is planned like a comma join.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from loft_warehouse.sql.schema import Schema

NO_STATS_ROWS = 200  # SQLite's row estimate (log scale, 10 per doubling) of a table without statistics
_PICKS = (exp.AnyValue, exp.ArgMax, exp.ArgMin)
_OPAQUE = (exp.Like, exp.ILike, exp.Is, exp.Or)  # operators SQLite does not look into for NULL rejection
_FIXED = "sqlite_fixed_column"  # meta key of a column replaced by its propagated constant


@dataclass(frozen=True)
class Source:
    """One table of a FROM clause: its alias, its dump name and whether it is the right side of
    a LEFT JOIN (which SQLite keeps inside every table before it). A WHERE (or inner ON) term
    that is never true for a NULL row of the table makes SQLite plan the LEFT JOIN as an inner
    join, unless its ON clause reads another LEFT JOIN's table."""

    alias: str
    table: str
    left_joined: bool


def _defines(select: exp.Select, alias: str) -> bool:
    from_ = select.args.get("from_")
    items = ([from_.this] if from_ is not None else []) + [j.this for j in select.args.get("joins") or []]
    return any(item.alias_or_name == alias for item in items)


def _owned(column: exp.Column, select: exp.Select) -> bool:
    """True when the column's table is one of this SELECT's sources (not a nested one's)."""
    parent = column.parent
    while parent is not None:
        if isinstance(parent, exp.Select) and _defines(parent, column.table):
            return parent is select
        parent = parent.parent
    return False


def _aliases(node: exp.Expr, select: exp.Select) -> set[str]:
    return {c.table for c in node.find_all(exp.Column) if c.table and _owned(c, select)}


def _conjuncts(node: exp.Expr | None) -> list[exp.Expr]:
    if node is None:
        return []
    return list(node.flatten()) if isinstance(node, exp.And) else [node]


def _where(select: exp.Select) -> list[exp.Expr]:
    where = select.args.get("where")
    return _conjuncts(where.this if where is not None else None)


def _rejects_null(node: exp.Expr, alias: str) -> bool:
    """True when the term is false or NULL whenever the table's columns are all NULL (SQLite
    then turns a LEFT JOIN of that table into an inner join)."""
    if isinstance(node, exp.Column):
        return node.table == alias
    if isinstance(node, exp.Not) and isinstance(node.this, exp.Is) and isinstance(node.this.expression, exp.Null):
        return _rejects_null(node.this.this, alias)
    if isinstance(node, exp.Between):
        return _rejects_null(node.this, alias)
    if isinstance(node, exp.Not | exp.Paren | exp.Cast):
        return _rejects_null(node.this, alias)
    if isinstance(node, exp.Binary) and not isinstance(node, _OPAQUE):
        return _rejects_null(node.this, alias) or _rejects_null(node.expression, alias)
    return False


def sources(select: exp.Select, schema: Schema) -> list[Source] | None:
    """The SELECT's tables in FROM order; None unless every one is a base table of the schema
    (not a subquery, nor a CTE, even one named like a table)."""
    from_ = select.args.get("from_")
    if from_ is None:
        return None
    ctes = {cte.alias_or_name for cte in select.root().find_all(exp.CTE)}
    joins = select.args.get("joins") or []
    rejecting = _where(select) + [t for j in joins if j.side != "LEFT" for t in _conjuncts(j.args.get("on"))]
    items = [(from_.this, None)] + [(j.this, j) for j in joins]
    found: list[Source] = []
    for item, join in items:
        if not isinstance(item, exp.Table) or item.name not in schema.tables or item.name in ctes:
            return None
        if item.args.get("db") or "rowid" in schema.tables[item.name]:
            return None
        alias = item.alias_or_name
        left = join is not None and join.side == "LEFT"
        if left and any(_rejects_null(t, alias) for t in rejecting):
            kept = {s.alias for s in found if s.left_joined}
            left = bool(kept & {c.table for c in join.find_all(exp.Column)})
        found.append(Source(alias, item.name, left))
    return found


def _terms(select: exp.Select, found: list[Source]) -> tuple[list[exp.Expr], dict[str, list[exp.Expr]]]:
    """(terms SQLite plans as filters, per LEFT-joined table the ON terms that can only search it)."""
    filters = _where(select)
    searches: dict[str, list[exp.Expr]] = {s.alias: [] for s in found}
    for join, source in zip(select.args.get("joins") or [], found[1:], strict=True):
        (searches[source.alias] if source.left_joined else filters).extend(_conjuncts(join.args.get("on")))
    return filters, searches


def _literal(node: exp.Expr) -> bool:
    return isinstance(node.this if isinstance(node, exp.Neg) else node, exp.Literal)


def _propagate_constants(terms: list[exp.Expr]) -> None:
    """SQLite's constant propagation, in place: given a term `t.c = literal`, t.c is that value
    in the other terms (`t.c = u.d` becomes a filter of u alone). SQLite only marks the column
    (and does not propagate further from it), so the value stands in a marked parenthesis: it
    reads no table, still counts as a column operand of `=`, and is not a literal -1, 0 or 1."""
    constants: dict[tuple[str, str], tuple[exp.Expr, exp.Expr]] = {}
    for term in terms:
        for column, other in _equality_sides(term):
            if _literal(other):
                constants.setdefault((column.table, column.name), (term, other))
    for term in terms:
        for column in list(term.find_all(exp.Column)):
            source = constants.get((column.table, column.name))
            if source is not None and source[0] is not term and column is not term:
                fixed = exp.Paren(this=source[1].copy())
                fixed.meta[_FIXED] = True
                column.replace(fixed)


def _plain_column(node: exp.Expr) -> exp.Column | None:
    """A column as SQLite's planner sees it (the rewrite's casts of booleans looked through)."""
    if isinstance(node, exp.Cast):
        node = node.this
    return node if isinstance(node, exp.Column) else None


def _equality_sides(term: exp.Expr) -> list[tuple[exp.Column, exp.Expr]]:
    """(column, other side) for each side of an equality that is a plain column."""
    if not isinstance(term, exp.EQ):
        return []
    pairs = []
    for side, other in ((term.this, term.expression), (term.expression, term.this)):
        column = _plain_column(side)
        if column is not None and column.table:
            pairs.append((column, other))
    return pairs


def _small_integer(node: exp.Expr) -> bool:
    if isinstance(node, exp.Neg):
        node = node.this
    return isinstance(node, exp.Literal) and node.is_int and int(node.this) <= 1


def _row_estimate(alias: str, terms: list[exp.Expr], select: exp.Select) -> int:
    """SQLite's estimate (log scale) of the rows a full scan of one table keeps after its own
    terms: one step fewer per term, at most a quarter with an equality between a column and
    what does not read the same table (a half when its right operand, as written, is the
    literal -1, 0 or 1)."""
    estimate, reduce = NO_STATS_ROWS, 0
    for term in terms:
        if _aliases(term, select) != {alias}:
            continue
        estimate -= 1
        sides = (term.this, term.expression) if isinstance(term, exp.EQ) else ()
        if any(_plain_column(side) is not None or side.meta.get(_FIXED) for side in sides) and not (
            _aliases(term.this, select) & _aliases(term.expression, select)
        ):
            reduce = max(reduce, 10 if _small_integer(term.expression) else 20)
    return min(estimate, NO_STATS_ROWS - reduce)


def _equalities(alias: str, terms: list[exp.Expr], select: exp.Select) -> list[set[str]]:
    """For each equality on a column of the table: the tables its other side reads."""
    return [
        _aliases(other, select) for term in terms for column, other in _equality_sides(term) if column.table == alias
    ]


def _searchable(reads: list[set[str]], placed: set[str]) -> bool:
    """Some equality on the table can search it given the tables placed (or constants)."""
    return any(r <= placed for r in reads)


def _reached(placed: set[str], equalities: dict[str, list[set[str]]]) -> set[str]:
    """The tables placed and every table that searches can add after them."""
    reached = set(placed)
    while grown := {a for a, reads in equalities.items() if a not in reached and _searchable(reads, reached)}:
        reached |= grown
    return reached


def _scans(placed: set[str], equalities: dict[str, list[set[str]]]) -> int:
    """How many more tables must be scanned in full to place every table after these."""
    reached, scans = _reached(placed, equalities), 0
    while len(reached) < len(equalities):
        reached, scans = _reached(reached | {next(a for a in equalities if a not in reached)}, equalities), scans + 1
    return scans


def loop_order(select: exp.Select, schema: Schema) -> list[tuple[Source, bool]] | None:
    """The nested-loop order SQLite chooses: (table, searched through an automatic index), outer first.

    Searches (automatic indexes) are cheap and full scans dear, and a scan costs least early:
    while some table cannot be reached by searches from the tables placed, the next is a
    scanned one, the one that leaves the fewest scans, then keeps the fewest rows by its own
    terms, then comes first in FROM order (the outermost table is chosen so too). Otherwise the
    next is the first table in FROM order that an equality (a join or a constant) can search.
    """
    select = select.copy()
    found = sources(select, schema)
    if found is None:
        return None
    filters, searches = _terms(select, found)
    _propagate_constants(filters)
    estimate = {s.alias: _row_estimate(s.alias, filters, select) for s in found}
    equalities = {s.alias: _equalities(s.alias, filters + searches[s.alias], select) for s in found}
    order: list[tuple[Source, bool]] = []
    placed: set[str] = set()
    while len(order) < len(found):
        ready = [
            (i, s)
            for i, s in enumerate(found)
            if s.alias not in placed and (not s.left_joined or all(t.alias in placed for t in found[:i]))
        ]
        reached = _reached(placed, equalities) if placed else set()
        scanned = [(i, s) for i, s in ready if s.alias not in reached]
        if scanned:
            _, pick = min(
                scanned, key=lambda c: (_scans(placed | {c[1].alias}, equalities), estimate[c[1].alias], c[0])
            )
        else:
            _, pick = min([c for c in ready if _searchable(equalities[c[1].alias], placed)] or ready)
        order.append((pick, bool(placed) and _searchable(equalities[pick.alias], placed)))
        placed.add(pick.alias)
    return order


def _used_columns(source: Source, select: exp.Select, schema: Schema) -> list[str]:
    used = {c.name for c in select.find_all(exp.Column) if c.table == source.alias and _owned(c, select)}
    return [name for name in schema.tables[source.table] if name in used]


def input_order(select: exp.Select, schema: Schema) -> list[exp.Ordered] | None:
    """The order in which SQLite's loops produce the rows of the FROM clause (None: unknown)."""
    loops = loop_order(select, schema)
    if loops is None:
        return None
    terms = []
    for depth, (source, searched) in enumerate(loops):
        if depth and searched:
            used = _used_columns(source, select, schema)
            terms += [exp.Ordered(this=exp.column(name, source.alias), nulls_first=True) for name in used]
        terms.append(exp.Ordered(this=exp.column("rowid", source.alias), nulls_first=False))
    return terms


def _group_order(select: exp.Select) -> list[exp.Ordered]:
    """The order of the groups: keys ascending, or in the ORDER BY's directions term by term."""
    keys = select.args["group"].expressions
    order = select.args.get("order")
    ordered = order.expressions if order is not None else []
    follow = len(ordered) == len(keys)
    result = []
    for i, key in enumerate(keys):
        if follow and ordered[i].args.get("desc"):
            result.append(exp.Ordered(this=key.copy(), desc=True, nulls_first=False))
        else:
            result.append(exp.Ordered(this=key.copy(), nulls_first=True))
    return result


def _in_order(kind: type[exp.First | exp.Last], value: exp.Expr, order: list[exp.Ordered]) -> exp.Expr:
    return kind(this=exp.Order(this=value.copy(), expressions=[o.copy() for o in order]))


def _resolved(pick: exp.Expr, scan: list[exp.Ordered]) -> exp.Expr:
    """SQLite's row for one bare column: the group's first row, or for min()/max() the first row
    holding the extreme; when the min()/max() argument is NULL on every row, the last row."""
    if not isinstance(pick, exp.ArgMax | exp.ArgMin):
        return _in_order(exp.First, pick.this, scan)
    key = pick.expression
    extreme = exp.Ordered(this=key.copy(), desc=isinstance(pick, exp.ArgMax) or None, nulls_first=False)
    return exp.Case(
        ifs=[
            exp.If(
                this=exp.EQ(this=exp.Count(this=key.copy()), expression=exp.Literal.number(0)),
                true=_in_order(exp.Last, pick.this, scan),
            )
        ],
        default=_in_order(exp.First, pick.this, [extreme, *scan]),
    )


def _bare_columns(select: exp.Select, scan: list[exp.Ordered]) -> None:
    """ANY_VALUE / ARG_MIN / ARG_MAX of this SELECT become the value of SQLite's row."""
    for pick in [p for p in select.find_all(*_PICKS) if _scope(p) is select]:
        target = pick.parent if isinstance(pick.parent, exp.IgnoreNulls) else pick
        target.replace(_resolved(pick, scan))


def _scope(node: exp.Expr) -> exp.Select | None:
    parent = node.parent
    while parent is not None and not isinstance(parent, exp.Select):
        parent = parent.parent
    return parent


def _is_aggregate(select: exp.Select) -> bool:
    return bool(select.args.get("group")) or any(
        _scope(a) is select and not a.find_ancestor(exp.Window) for a in select.find_all(exp.AggFunc)
    )


def _tie_breakers(select: exp.Select, scan: list[exp.Ordered] | None) -> list[exp.Ordered] | None:
    if select.args.get("distinct"):
        return None
    if select.args.get("group"):
        return _group_order(select)
    if _is_aggregate(select):
        return []
    return scan


def sqlite_row_order(tree: exp.Expr, schema: Schema) -> exp.Expr:
    """Make SQLite's implicit row order explicit in a rewritten, qualified DuckDB query (in place)."""
    for select in list(tree.find_all(exp.Select)):
        scan = input_order(select, schema)
        if scan is not None and _is_aggregate(select):
            _bare_columns(select, scan)
        if not (select.args.get("limit") or (select is tree and select.args.get("order"))):
            continue
        extra = _tie_breakers(select, scan)
        if extra:
            order = select.args.get("order") or exp.Order(expressions=[])
            order.set("expressions", order.expressions + extra)
            select.set("order", order)
    return tree
