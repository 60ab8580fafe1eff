"""The dashboard's pages (app.py runs them; `loft dashboard` serves app.py on 127.0.0.1).

Pages (sidebar): leaderboard beside the paper, one query's drill-down, position curves, context
length x dataset heatmaps, paired comparisons, the cost ledger and run status. Everything is read
from the published warehouse file (data.py), so a build running meanwhile never conflicts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from loft_warehouse.dashboard import data

PAGES = ("Leaderboard", "Query drill-down", "Position curves", "Heatmaps", "Paired comparison", "Cost", "Run status")


@st.cache_data(ttl=300, show_spinner=False)
def _read(path: str, stamp: float, sql: str, params: tuple = ()) -> pd.DataFrame:
    return data.read(Path(path), sql, list(params))


def query(sql: str, schema: str, *params: object) -> pd.DataFrame:
    path = data.warehouse_path()
    return _read(str(path), data.stamp(path), sql.format(schema=schema), tuple(params))


def _bar_label(row: Any) -> str:
    """One bar per row: paper rows by model, this warehouse's by system, method, split and source."""
    if row.source == "paper":
        return f"paper: {row.system}"
    method = f" {row.method}" if isinstance(row.method, str) and row.method != "cic" else ""
    source = "import: " if row.source == "import" else ""
    return f"{source}{row.system}{method} ({row.size} {row.split})"


def leaderboard(schema: str) -> None:
    st.header(f"Leaderboard ({schema}) beside the paper's Table 2")
    frame = query(data.LEADERBOARD, schema)
    ours = frame[frame["rank_group"] == "warehouse"]
    if ours.empty:
        st.info("No scored run at this size yet: build it with `dbt build --select " + schema + "`.")
    st.caption(
        "Paper rows: LOFT 128k release corpus, test split. This warehouse's rows name their own corpus and split "
        "(corpus_origin); the two groups are ranked apart."
    )
    for (task, dataset, metric), group in frame.groupby(["task", "dataset", "metric"], sort=True):
        if not (group["rank_group"] == "warehouse").any():
            continue
        labels = [_bar_label(row) for row in group.itertuples()]
        low = (group["value"] - group["ci_low"]).fillna(0)
        high = (group["ci_high"] - group["value"]).fillna(0)
        figure = go.Figure(
            go.Bar(
                x=labels,
                y=group["value"],
                error_y={"type": "data", "array": high, "arrayminus": low},
                marker_color=["#9aa5b1" if g == "paper" else "#1f77b4" for g in group["rank_group"]],
                text=[f"{v:.2f}" for v in group["value"]],
            )
        )
        figure.update_layout(title=f"{task}/{dataset}: {metric}", yaxis_range=[0, 1.05], height=320)
        st.plotly_chart(figure, key=f"lb-{task}-{dataset}-{metric}")
    st.subheader("Every row")
    st.dataframe(frame, hide_index=True)


def drill_down(schema: str) -> None:
    st.header("One query: prompt, raw response, parsed answer, gold, scores")
    metrics = query(data.PRIMARY_METRICS, schema)
    scored = metrics[metrics["run_status"] == "scored"]
    if scored.empty:
        st.info("No scored run at this size yet.")
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
        st.subheader(f"{row.variant} / {row.method}, turn {row.turn}: {row.status}")
        st.markdown("**Query**")
        st.code(str(row.query_text), language=None, wrap_lines=True)
        prefix = str(row.prefix_text or "")
        st.markdown(f"**Prompt head** (first 1,500 of {len(prefix):,} characters of the shared prefix)")
        st.code((str(row.head or "") + prefix)[:1500], language=None, wrap_lines=True)
        st.markdown("**Prompt suffix**")
        st.code(str(row.suffix), language=None, wrap_lines=True)
        st.markdown("**Raw response**")
        st.code(str(row.raw_text), language=None, wrap_lines=True)
        st.markdown(f"**Parsed answer** ({row.parse_status_loft})")
        st.code(str(row.answer_loft_json), language="json", wrap_lines=True)
        st.markdown("**Gold**")
        st.code(str(row.gold_loft if row.gold_loft is not None else row.gold), language="json", wrap_lines=True)
    st.markdown("**Scores**")
    st.dataframe(query(data.SCORES_OF, schema, task, dataset, system, qid), hide_index=True)


def position_curves(schema: str) -> None:
    st.header("Accuracy by where the gold sits")
    curves = query(data.POSITION_CURVES, schema)
    if curves.empty:
        st.info(
            "No position curve yet: run a system on a retrieval or RAG dataset (gold depth deciles), or build a "
            "positional study (prompt_variants gold_pos_*, datasets litm/* or rr/*)."
        )
        return
    experiment = st.selectbox("Experiment", sorted(curves["experiment"].unique()), key="curve-experiment")
    chosen = curves[curves["experiment"] == experiment].dropna(subset=["position"])
    chosen = chosen.assign(
        run=chosen["system"] + " / " + chosen["task"] + "/" + chosen["dataset"] + " " + chosen["split"]
    )
    st.caption(f"{experiment}: {len(chosen)} points, each a mean with its 95% interval, per run")
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


def heatmaps(schemas: list[str]) -> None:
    st.header("Context length x dataset, per system (primary metric, test split where built, else dev)")
    frames = [query(data.PRIMARY_METRICS, schema) for schema in schemas]
    metrics = pd.concat(frames) if frames else pd.DataFrame()
    metrics = (
        metrics[(metrics["run_status"] == "scored") & (metrics["variant"] == "default")] if len(metrics) else metrics
    )
    if metrics.empty:
        st.info("No scored run yet.")
        return
    metrics = metrics.assign(dataset_name=metrics["task"] + "/" + metrics["dataset"])
    best_split = metrics.sort_values("split", ascending=False).drop_duplicates(
        ["size", "system", "method", "dataset_name"]
    )
    for system, group in best_split.groupby("system"):
        table = group.pivot_table(index="dataset_name", columns="size", values="mean", aggfunc="first")
        table = table[[size for size in data.SIZE_LABELS if size in table.columns]]
        figure = px.imshow(table, text_auto=".2f", zmin=0, zmax=1, aspect="auto", color_continuous_scale="Blues")
        figure.update_layout(title=f"{system}", height=120 + 40 * len(table))
        st.plotly_chart(figure, key=f"heat-{system}")


def paired(schema: str) -> None:
    st.header("Paired comparison of two runs on the same queries")
    pairs = query(data.PAIRED, schema)
    if pairs.empty:
        st.info("Nothing to compare: a dataset needs two scored runs (systems, methods, variants or an import).")
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
        st.warning(str(row["note"]))
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


def cost(schema: str) -> None:
    st.header("Cost ledger: estimated before the calls, and spent")
    ledger = query(data.COST_LEDGER, schema)
    if ledger.empty:
        st.info("No estimate and no response at this size yet.")
        return
    totals = ledger.groupby("system")[["estimated_usd_no_cache", "estimated_usd_with_cache", "actual_usd"]].sum()
    st.plotly_chart(px.bar(totals, barmode="group", labels={"value": "USD"}), key="cost-bars")
    st.dataframe(ledger, hide_index=True)


def run_status(schema: str) -> None:
    st.header("Run status: responses by status, and the latest errors")
    status = query(data.RUN_STATUS, schema)
    if status.empty:
        st.info("No response stored at this size yet.")
        return
    st.plotly_chart(px.bar(status, x="system", y="responses", color="status", barmode="stack"), key="status-bars")
    st.dataframe(status, hide_index=True)
    st.subheader("Errors and blocks")
    st.dataframe(query(data.ERRORS, schema), hide_index=True)


def main() -> None:
    st.set_page_config(page_title="LOFT warehouse", layout="wide")
    path = data.warehouse_path()
    schemas = data.built_sizes(path)
    st.sidebar.title("LOFT warehouse")
    st.sidebar.caption(f"{path}")
    if not schemas:
        st.warning(f"No built warehouse at {path}: run `make build` (or `dbt build --select loft_128k`) first.")
        return
    page = st.sidebar.radio("Page", PAGES, key="page")
    default = schemas.index("loft_128k") if "loft_128k" in schemas else len(schemas) - 1
    schema = st.sidebar.selectbox("Size", schemas, index=default, key="size")
    if page == "Leaderboard":
        leaderboard(schema)
    elif page == "Query drill-down":
        drill_down(schema)
    elif page == "Position curves":
        position_curves(schema)
    elif page == "Heatmaps":
        heatmaps(schemas)
    elif page == "Paired comparison":
        paired(schema)
    elif page == "Cost":
        cost(schema)
    else:
        run_status(schema)
