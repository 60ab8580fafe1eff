"""The dashboard's pages (app.py runs them; `loft dashboard` serves app.py on 127.0.0.1).

Pages (sidebar): leaderboard beside the paper, the paper's Table 2 as a grid, one query's
drill-down, position curves, context length x dataset heatmaps, paired comparisons, the cost
ledger and run status. The sidebar's filters (system, dataset, method, quick tries) apply to
every page, and an empty page says what the filters hid. Everything is read from the published
warehouse file (data.py), so a build running meanwhile never conflicts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from loft_warehouse.dashboard import data
from loft_warehouse.prompts.multimodal import TEXT

PAGES = (
    "Leaderboard",
    "Table 2 grid",
    "Query drill-down",
    "Position curves",
    "Heatmaps",
    "Paired comparison",
    "Cost",
    "Run status",
)
# The paper's model the Table 2 grid colours differences from, unless another is picked.
REFERENCE_MODEL = "Gemini 1.5 Pro"
# Runs a position-curve chart draws before more are picked.
CURVE_RUNS = 8
# The experiment whose points are measured (gold depth deciles) rather than placed by a variant.
MEASURED_DEPTH = "loft_gold_depth"
# How a run's label and bar say where its answers came from (responses.source, leaderboard.rank_group).
SOURCE_MARKS = {"import": "import: ", "dry_run": "dry run: "}
# What CommonMark and HTML read in text: ASCII punctuation (each may be backslash-escaped).
MARKDOWN_SPECIAL = re.compile(r"[\\`*_{}\[\]()#+\-.!|<>~$&:\"']")
RANK_GROUP_COLOURS = {"paper": "#9aa5b1", "quick_try": "#f2a93b", "dry_run": "#b07cc6"}


@st.cache_data(ttl=300, show_spinner=False)
def _read(path: str, stamp: float, sql: str, params: tuple = ()) -> pd.DataFrame:
    return data.read(Path(path), sql, list(params))


def query(sql: str, schema: str, *params: object) -> pd.DataFrame:
    path = data.warehouse_path()
    return _read(str(path), data.stamp(path), sql.format(schema=schema), tuple(params))


@dataclass(frozen=True)
class Filters:
    """The sidebar's choices; an empty choice keeps everything. Paper rows have no method and
    are never filtered by system."""

    systems: tuple[str, ...] = ()
    datasets: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    quick_tries: bool = False

    def apply(self, frame: pd.DataFrame) -> tuple[pd.DataFrame, str]:
        """The rows the filters keep, and what they hid (a sentence, '' when nothing)."""
        if frame.empty:
            return frame, ""
        paper = frame["source"] == "paper" if "source" in frame.columns else pd.Series(False, index=frame.index)
        tests = []
        if self.systems and "system" in frame.columns:
            tests.append(("other systems", paper | frame["system"].isin(self.systems)))
        if self.datasets and {"task", "dataset"} <= set(frame.columns):
            tests.append(("other datasets", (frame["task"] + "/" + frame["dataset"]).isin(self.datasets)))
        if self.methods and "method" in frame.columns:
            tests.append(("other methods", frame["method"].isna() | frame["method"].isin(self.methods)))
        if not self.quick_tries and "query_limit" in frame.columns:
            tests.append(("quick tries (tick Show quick tries)", frame["query_limit"].isna()))
        keep = pd.Series(True, index=frame.index)
        said = []
        for what, kept in tests:
            n_hidden = int((keep & ~kept).sum())
            if n_hidden:
                said.append(f"{n_hidden} of {what}")
            keep &= kept
        return frame[keep], ("Hidden by the sidebar's filters: " + ", ".join(said) + " row(s).") if said else ""


def as_text(value: object) -> str:
    """A value from the warehouse as literal text inside Streamlit markdown: every character
    markdown or HTML reads (links, images, tags, emphasis) escaped, so a qid, system or variant
    of an imported file shows as written and never loads anything."""
    return MARKDOWN_SPECIAL.sub(r"\\\g<0>", str(value))


def _empty(message: str, hidden: str) -> None:
    st.info(f"{message} {hidden}".strip())


def sidebar_filters(schema: str) -> Filters:
    """The filter widgets, their options read from the size's metrics."""
    metrics = query(data.PRIMARY_METRICS, schema)
    st.sidebar.subheader("Filters")
    systems = st.sidebar.multiselect("System", sorted(metrics["system"].unique()), key="filter-system")
    names = sorted((metrics["task"] + "/" + metrics["dataset"]).unique()) if len(metrics) else []
    datasets = st.sidebar.multiselect("Dataset", names, key="filter-dataset")
    methods = st.sidebar.multiselect("Method", sorted(metrics["method"].unique()), key="filter-method")
    quick = st.sidebar.checkbox("Show quick tries (runs sent with a limit)", key="filter-quick")
    return Filters(tuple(systems), tuple(datasets), tuple(methods), quick)


def _run_label(row: Any) -> str:
    """A run by its source, system and method: `paper: GPT-4o`, `bm25`, `import: x`, `gpt-4o icr`,
    `dry run: gpt-4o` (answered by the fixture server, never a model)."""
    if row.source == "paper":
        return f"paper: {row.system}"
    method = f" {row.method}" if isinstance(row.method, str) and row.method != "cic" else ""
    source = SOURCE_MARKS.get(row.source, "")
    return f"{source}{row.system}{method}"


def _bar_label(row: Any) -> str:
    """One bar per row: paper rows by model, this warehouse's by run, size and split, with the share
    of its calls that gave no usable answer when that is flagged."""
    if row.source == "paper":
        return _run_label(row)
    health = f", no answer {row.no_answer_share:.0%}" if row.is_health_flagged is True else ""
    return f"{_run_label(row)} ({row.size} {row.split}{health})"


def _chart_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """One chart per dataset: the rows of the metric the paper reports, else the primary metric's."""
    has_paper_metric = frame.groupby(["task", "dataset"])["is_paper_metric"].transform("any")
    return frame[(has_paper_metric & frame["is_paper_metric"]) | (~has_paper_metric & frame["is_primary"])]


def leaderboard(schema: str, filters: Filters) -> None:
    st.header(f"Leaderboard ({schema}) beside the paper's Table 2")
    frame, hidden = filters.apply(query(data.LEADERBOARD, schema))
    ours = frame[frame["rank_group"] != "paper"]
    if ours.empty:
        _empty(f"No scored run to show at this size: build one with `loft build --select {schema}`.", hidden)
    elif hidden:
        st.caption(hidden)
    st.caption(
        "Paper rows: LOFT 128k release corpus, test split. This warehouse's rows name their own corpus and split "
        "(corpus_origin); paper rows, full runs, quick tries and dry runs (fixture answers, marked `dry run:`) "
        "are ranked apart (rank_group)."
    )
    for (task, dataset), group in _chart_rows(frame).groupby(["task", "dataset"], sort=True):
        if (group["rank_group"] == "paper").all():
            continue
        metric = group["metric"].iloc[0]
        labels = [_bar_label(row) for row in group.itertuples()]
        low = (group["value"] - group["ci_low"]).fillna(0)
        high = (group["ci_high"] - group["value"]).fillna(0)
        figure = go.Figure(
            go.Bar(
                x=labels,
                y=group["value"],
                error_y={"type": "data", "array": high, "arrayminus": low},
                marker_color=[RANK_GROUP_COLOURS.get(g, "#1f77b4") for g in group["rank_group"]],
                text=[f"{v:.2f}" for v in group["value"]],
            )
        )
        figure.update_layout(title=f"{task}/{dataset}: {metric}", yaxis_range=[0, 1.05], height=320)
        st.plotly_chart(figure, key=f"lb-{task}-{dataset}")
    st.subheader("Every row")
    st.dataframe(frame, hide_index=True)


def _grid_column(row: Any) -> str:
    """A Table 2 column: the paper's model, or this warehouse's run (quick tries say so)."""
    quick_try = f" [quick try: {int(row.query_limit)}]" if pd.notna(row.query_limit) else ""
    return _run_label(row) + quick_try


def table2_grid(schema: str, filters: Filters) -> None:
    st.header("The paper's Table 2: datasets x systems")
    frame, hidden = filters.apply(query(data.LEADERBOARD, schema))
    frame = frame[frame["is_paper_metric"]]
    models = sorted(frame[frame["source"] == "paper"]["system"].unique())
    splits = sorted(frame[frame["source"] != "paper"]["split"].unique(), reverse=True)
    if not splits or not models:
        _empty(f"No run of a Table 2 dataset to set beside the paper at this size ({schema}).", hidden)
        return
    split = st.selectbox("This warehouse's split", splits, key="grid-split")
    frame = frame[(frame["source"] == "paper") | (frame["split"] == split)]
    reference = st.selectbox(
        "Colour by the difference from",
        models,
        index=models.index(REFERENCE_MODEL) if REFERENCE_MODEL in models else 0,
        key="grid-reference",
    )
    frame = frame.assign(
        row_name=frame["task"] + "/" + frame["dataset"] + ": " + frame["metric"],
        column=[_grid_column(row) for row in frame.itertuples()],
    )
    base = frame[(frame["source"] == "paper") & (frame["system"] == reference)].set_index("row_name")["value"]
    frame = frame.assign(difference=frame["value"] - frame["row_name"].map(base))
    columns = [f"paper: {m}" for m in models] + sorted(set(frame["column"]) - {f"paper: {m}" for m in models})
    rows = sorted(frame["row_name"].unique())

    def cells(value: str) -> pd.DataFrame:
        return frame.pivot_table(index="row_name", columns="column", values=value, aggfunc="first").reindex(
            index=rows, columns=columns
        )

    values, differences, lows, highs = cells("value"), cells("difference"), cells("ci_low"), cells("ci_high")

    def hover(row: str, column: str) -> str:
        value, low, high = values.at[row, column], lows.at[row, column], highs.at[row, column]
        if pd.isna(value):
            return f"{column}<br>{row}: not run"
        text = f"{column}<br>{row}: {value:.3f}"
        if pd.notna(low):
            text += f"<br>95% CI [{low:.3f}, {high:.3f}]"
        if pd.notna(differences.at[row, column]):
            text += f"<br>{differences.at[row, column]:+.3f} vs {reference}"
        return text

    figure = go.Figure(
        go.Heatmap(
            z=differences.to_numpy(dtype=float),
            x=columns,
            y=rows,
            text=values.map(lambda v: "" if pd.isna(v) else f"{v:.2f}").to_numpy(),
            texttemplate="%{text}",
            hovertext=[[hover(row, column) for column in columns] for row in rows],
            hoverinfo="text",
            colorscale="RdBu",
            zmid=0,
            colorbar={"title": f"vs {reference}"},
        )
    )
    figure.update_layout(height=160 + 32 * len(rows), margin={"t": 40}, yaxis={"autorange": "reversed"})
    st.caption(
        f"Cells: the value; colour: its difference from {reference} (paper). Hover for the 95% interval. "
        f"Paper: LOFT 128k release corpus, test split; this warehouse: its own corpus at this size, {split} split."
    )
    if hidden:
        st.caption(hidden)
    st.plotly_chart(figure, key="grid")
    st.dataframe(values.reset_index(), hide_index=True)


def drill_down(schema: str, filters: Filters) -> None:
    st.header("One query: prompt, raw response, parsed answer, gold, scores")
    metrics, hidden = filters.apply(query(data.PRIMARY_METRICS, schema))
    scored = metrics[metrics["run_status"] == "scored"]
    if scored.empty:
        _empty("No scored run to show at this size.", hidden)
        return
    names = sorted({f"{t}/{d}" for t, d in zip(scored["task"], scored["dataset"], strict=True)})
    name = st.selectbox("Dataset", names, key="drill-dataset")
    task, dataset = name.split("/", 1)
    systems = sorted(scored[(scored["task"] == task) & (scored["dataset"] == dataset)]["system"].unique())
    system = st.selectbox("System", systems, key="drill-system")
    qids = query(data.QUERIES_OF, schema, task, dataset, system)
    labels = [f"{split} {qid}" for qid, split in zip(qids["qid"], qids["split"], strict=True)]
    choice = st.selectbox("Query", labels, key="drill-query")
    qid = choice.split(" ", 1)[1]
    rows = query(data.DRILL, schema, task, dataset, system, qid)
    for row in rows.itertuples():
        st.subheader(f"{as_text(row.variant)} / {as_text(row.method)}, turn {row.turn}: {as_text(row.status)}")
        gold = row.gold_loft if row.gold_loft is not None else row.gold
        if task == "mm":
            gold = _multimodal_query(schema, dataset, qid)
        else:
            _text_query(row)
        if isinstance(row.thought_text, str) and row.thought_text:
            st.markdown("**Thinking** (as the provider returned it: kept, never parsed or scored)")
            st.code(row.thought_text, language=None, wrap_lines=True)
        st.markdown("**Raw response**")
        st.code(str(row.raw_text), language=None, wrap_lines=True)
        st.markdown(f"**Parsed answer** ({as_text(row.parse_status_loft)})")
        st.code(str(row.answer_loft_json), language="json", wrap_lines=True)
        st.markdown("**Gold**")
        st.code(str(gold), language="json", wrap_lines=True)
    st.markdown("**Scores**")
    st.dataframe(query(data.SCORES_OF, schema, task, dataset, system, qid), hide_index=True)


def _opening(text: str) -> None:
    st.markdown(f"**Prompt opening** (first {min(1500, len(text)):,} of {len(text):,} characters)")
    st.code(text[:1500], language=None, wrap_lines=True)


def _text_query(row: Any) -> None:
    st.markdown("**Query**")
    st.code(str(row.query_text), language=None, wrap_lines=True)
    _opening(str(row.head or "") + str(row.prefix_text or ""))
    st.markdown("**Prompt suffix**")
    st.code(str(row.suffix), language=None, wrap_lines=True)


def _parts_text(parts: pd.DataFrame) -> str:
    """Text parts as sent, each media part as a bracketed line naming its type and hash."""
    return "".join(
        str(part.text) if part.mime_type == TEXT else f"[{part.mime_type} {str(part.media_sha256)[:12]}]\n"
        for part in parts.itertuples()
    )


def _multimodal_query(schema: str, dataset: str, qid: str) -> str:
    """A multimodal query: its media as the model received them and its prompt's parts; returns
    its gold (the pids, JSON)."""
    st.markdown(f"**Query media** (mm/{as_text(dataset)} {as_text(qid)}, as sent)")
    for item in query(data.MM_QUERY_MEDIA, schema, dataset, qid).itertuples():
        if item.mime_type == "audio/wav":
            st.audio(bytes(item.data), format="audio/wav")
        else:
            st.image(bytes(item.data), caption=f"{as_text(qid)}: {as_text(item.mime_type)}")
    parts = query(data.MM_PROMPT_PARTS, schema, dataset, qid)
    _opening(_parts_text(parts[parts["section"] == "prefix"]))
    st.markdown("**Prompt suffix**")
    st.code(_parts_text(parts[parts["section"] == "suffix"]), language=None, wrap_lines=True)
    return str(query(data.MM_GOLD, schema, dataset, qid)["gold"].iloc[0])


def position_curves(schema: str, filters: Filters) -> None:
    st.header("Accuracy by where the gold sits")
    curves, hidden = filters.apply(query(data.POSITION_CURVES, schema))
    if curves.empty:
        _empty(
            "No position curve to show: run a system on a retrieval or RAG dataset (gold depth deciles), or build a "
            "positional study (prompt_variants gold_pos_*, datasets litm/* or rr/*).",
            hidden,
        )
        return
    experiment = st.selectbox("Experiment", sorted(curves["experiment"].unique()), key="curve-experiment")
    chosen = curves[curves["experiment"] == experiment].dropna(subset=["position"])
    run = chosen["system"] + " / " + chosen["task"] + "/" + chosen["dataset"] + " " + chosen["split"]
    if experiment == MEASURED_DEPTH:  # one curve per prompt variant; a designed one's variant is its position
        run = run + " " + chosen["variant"]
    chosen = chosen.assign(run=run)
    runs = sorted(chosen["run"].unique())
    picked = st.multiselect("Runs", runs, default=runs[:CURVE_RUNS], key="curve-runs")
    chosen = chosen[chosen["run"].isin(picked)]
    st.caption(
        f"{experiment}: {len(picked)} of {len(runs)} runs, {len(chosen)} points, each a mean with its 95% interval"
    )
    figure = px.line(
        chosen,
        x="position",
        y="mean",
        color="run",
        markers=True,
        error_y=chosen["ci_high"] - chosen["mean"],
        error_y_minus=chosen["mean"] - chosen["ci_low"],
        labels={"position": chosen["position_unit"].iloc[0] if len(chosen) else "position", "mean": "accuracy"},
    )
    figure.update_layout(yaxis_range=[0, 1.05])
    st.plotly_chart(figure, key="curve")
    st.dataframe(chosen, hide_index=True)


def heatmaps(schemas: list[str], filters: Filters) -> None:
    st.header("Context length x dataset, per system (primary metric, test split where built, else dev)")
    frames = [query(data.PRIMARY_METRICS, schema) for schema in schemas]
    metrics, hidden = filters.apply(pd.concat(frames) if frames else pd.DataFrame())
    metrics = (
        metrics[(metrics["run_status"] == "scored") & (metrics["variant"] == "default")] if len(metrics) else metrics
    )
    if metrics.empty:
        _empty("No scored run to show.", hidden)
        return
    if len(schemas) == 1:
        others = ", ".join(f"`dbt build --select {s}`" for s in data.SIZE_SCHEMAS if s not in schemas)
        st.caption(f"Only {schemas[0]} is built, so each map has one column: {others} adds the other sizes.")
    metrics = metrics.assign(dataset_name=metrics["task"] + "/" + metrics["dataset"])
    best_split = metrics.sort_values("split", ascending=False).drop_duplicates(
        ["size", "system", "method", "dataset_name"]
    )
    for system, group in best_split.groupby("system"):
        table = group.pivot_table(index="dataset_name", columns="size", values="mean", aggfunc="first")
        table = table[[size for size in data.SIZE_LABELS if size in table.columns]]
        figure = px.imshow(table, text_auto=".2f", zmin=0, zmax=1, aspect="auto", color_continuous_scale="Blues")
        figure.update_layout(title=f"{system}", height=160 + 40 * len(table), margin={"t": 60})
        st.plotly_chart(figure, key=f"heat-{system}")


def paired(schema: str, filters: Filters) -> None:
    st.header("Paired comparison of two runs on the same queries")
    pairs = query(data.PAIRED, schema)
    if filters.systems:
        pairs = pairs[pairs["system_a"].isin(filters.systems) | pairs["system_b"].isin(filters.systems)]
    if filters.datasets:
        pairs = pairs[(pairs["task"] + "/" + pairs["dataset"]).isin(filters.datasets)]
    if pairs.empty:
        hidden = " (the sidebar's filters may hide some)" if filters.systems or filters.datasets else ""
        st.info(
            f"Nothing to compare: a dataset needs two scored runs (systems, methods, variants or an import){hidden}."
        )
        return
    pairs = pairs.assign(
        arm_a=pairs["source_a"] + ":" + pairs["system_a"] + "/" + pairs["method_a"] + "/" + pairs["variant_a"],
        arm_b=pairs["source_b"] + ":" + pairs["system_b"] + "/" + pairs["method_b"] + "/" + pairs["variant_b"],
        where=pairs["task"] + "/" + pairs["dataset"] + " " + pairs["split"],
    )
    where = st.selectbox("Dataset and split", sorted(pairs["where"].unique()), key="pair-where")
    here = pairs[pairs["where"] == where]
    arm_a = st.selectbox("Run a", sorted(here["arm_a"].unique()), key="pair-a")
    arm_b = st.selectbox("Run b", sorted(here[here["arm_a"] == arm_a]["arm_b"].unique()), key="pair-b")
    row = here[(here["arm_a"] == arm_a) & (here["arm_b"] == arm_b)].iloc[0]
    if not row["is_same_queries"]:
        st.warning(as_text(row["note"]))
        return
    left, middle, right = st.columns(3)
    left.metric("mean a", f"{row['mean_a']:.3f}")
    middle.metric("mean b", f"{row['mean_b']:.3f}")
    right.metric("b - a", f"{row['difference']:+.3f}")
    st.write(
        f"95% paired bootstrap interval [{row['difference_ci_low']:+.3f}, {row['difference_ci_high']:+.3f}] "
        f"over {int(row['n_common'])} query turns ({row['metric_name']})."
    )
    if pd.notna(row["mcnemar_p"]):
        st.write(
            f"McNemar exact p = {row['mcnemar_p']:.4g} (right only in a: {int(row['n_only_a'])}, "
            f"right only in b: {int(row['n_only_b'])})."
        )
    st.dataframe(here.drop(columns=["arm_a", "arm_b", "where"]), hide_index=True)


def cost(schema: str, filters: Filters) -> None:
    st.header("Cost ledger: estimated before the calls, and spent")
    ledger = query(data.COST_LEDGER, schema)
    if filters.systems:
        ledger = ledger[ledger["system"].isin(filters.systems)]
    if filters.datasets:
        ledger = ledger[(ledger["task"] + "/" + ledger["dataset"]).isin(filters.datasets)]
    ran = ledger.groupby("system")[["n_ok", "n_pending"]].transform("sum").sum(axis=1) > 0
    if not st.checkbox("Include systems that did not run (estimates only)", key="cost-all"):
        if (~ran).any():
            left_out = ", ".join(as_text(name) for name in sorted(ledger[~ran]["system"].unique()))
            st.caption(f"Left out: {left_out} (no response stored).")
        ledger = ledger[ran]
    if ledger.empty:
        st.info("No system ran at this size yet: tick the box above to see the estimates.")
        return
    totals = ledger.groupby("system")[["estimated_usd_no_cache", "estimated_usd_with_cache", "actual_usd"]].sum()
    st.plotly_chart(px.bar(totals, barmode="group", labels={"value": "USD"}), key="cost-bars")
    st.dataframe(ledger, hide_index=True)


def run_status(schema: str, filters: Filters) -> None:
    st.header("Run status: responses by status, and the latest errors")
    status = query(data.RUN_STATUS, schema)
    if filters.systems:
        status = status[status["system"].isin(filters.systems)]
    if status.empty:
        st.info("No response stored at this size yet.")
        return
    st.plotly_chart(px.bar(status, x="system", y="responses", color="status", barmode="stack"), key="status-bars")
    st.dataframe(status, hide_index=True)
    st.subheader("Answer health per run")
    health = query(data.ANSWER_HEALTH, schema)
    if filters.systems:
        health = health[health["system"].isin(filters.systems)]
    flagged = int(health["is_health_flagged"].fillna(False).sum())
    st.caption(
        f"{flagged} of {len(health)} run(s) flagged: more than the threshold (var answer_health_threshold, 5% by "
        "default) of their calls came back empty, truncated at the output limit, blocked, or unparsable by LOFT's "
        "parser, so their scores say as much about the budget or the parser as about the model."
    )
    st.dataframe(health, hide_index=True)
    st.subheader("Errors and blocks")
    st.dataframe(query(data.ERRORS, schema), hide_index=True)


def main() -> None:
    st.set_page_config(page_title="LOFT warehouse", layout="wide")
    path = data.warehouse_path()
    schemas = data.built_sizes(path)
    st.sidebar.title("LOFT warehouse")
    st.sidebar.caption(as_text(path))
    if not schemas:
        st.warning(f"No built warehouse at {as_text(path)}: run `make build` (`loft build --select loft_128k`) first.")
        return
    page = st.sidebar.radio("Page", PAGES, key="page")
    default = schemas.index("loft_128k") if "loft_128k" in schemas else len(schemas) - 1
    schema = st.sidebar.selectbox("Size", schemas, index=default, key="size")
    filters = sidebar_filters(schema)
    if page == "Leaderboard":
        leaderboard(schema, filters)
    elif page == "Table 2 grid":
        table2_grid(schema, filters)
    elif page == "Query drill-down":
        drill_down(schema, filters)
    elif page == "Position curves":
        position_curves(schema, filters)
    elif page == "Heatmaps":
        heatmaps(schemas, filters)
    elif page == "Paired comparison":
        paired(schema, filters)
    elif page == "Cost":
        cost(schema, filters)
    else:
        run_status(schema, filters)
