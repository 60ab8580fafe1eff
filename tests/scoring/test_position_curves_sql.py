"""int_position_curves (the position_curves mart's rows): the measured gold-depth curve is drawn
per prompt variant (issue 56: pooling a run's variants let the Without-CoT and few-shot drops leak
into the default prompt's depth curve, n = 13 variants x 100 at ArguAna)."""

from __future__ import annotations

from tests.scoring.sqlkit import connect, model_sql, scores_table

N = 20


def _scores(variant: str, right: int, depth: float) -> list[dict]:
    return [
        {"system": "sys", "task": "retrieval", "dataset": "arguana", "variant": variant, "qid": f"q{i}",
         "metric": "recall@1", "value": float(i < right), "gold_depth": depth}
        for i in range(N)
    ]  # fmt: skip


def test_a_depth_curve_is_one_per_prompt_variant_never_pooled() -> None:
    con = connect()
    scores_table(con, [*_scores("default", 16, 0.05), *_scores("no_cot", 4, 0.05), *_scores("few_shot_0", 10, 0.55)])
    sql = model_sql("int_position_curves")
    points = con.sql(
        f"select variant, position, n, mean from ({sql}) where experiment = 'loft_gold_depth' and rule = 'loft' "
        "order by variant"
    ).fetchall()
    assert points == [("default", 0.0, N, 0.8), ("few_shot_0", 0.5, N, 0.5), ("no_cot", 0.0, N, 0.2)]
