{#
  int_position_curves: accuracy by gold position, ready to plot. One row per (system, method,
  dataset, variant, experiment, position, split, metric, rule) over the dataset's primary metric:
  - designed positions: every prompt variant that places the gold (prompt_variants.experiment:
    LOFT's gold_pos_* variants in percent of the corpus, Lost in the Middle's gold document
    index and queried-key index, R&R's answer position in tokens), with the studies' reference
    settings (closed_book, oracle) as their own experiments at a null position;
  - measured positions: every other run on a LOFT retrieval or RAG prompt (the default variant
    included), by the decile of the first gold document's depth in the corpus
    (experiment loft_gold_depth, position 0.0, 0.1, ..., 0.9), one curve per prompt variant
    (pooling them let an ablation's or few-shot variant's drop leak into the default's curve),
    so Figure 4/9-style curves come from any run.
  n, mean and the 95% interval as in metrics; points with no answered row are left out.
  Incremental by run group (system, method, dataset and split, its variants together): a build
  computes only the groups whose curves_fingerprint (int_run_fingerprints) is not yet stored as a
  run_fingerprint, and drops the rows of groups whose fingerprint is gone. A group with no point
  keeps one row without a point (experiment null), so that it too is computed once; the
  position_curves mart is the other rows.
#}
{{ config(
    materialized='incremental',
    incremental_strategy='append',
    on_schema_change='append_new_columns',
    post_hook="{{ incremental_drop_stale_runs(ref('loft_128k__int_run_fingerprints'), 'curves_fingerprint') }}"
) }}
{%- set group_keys = ['source', 'system', 'method', 'task', 'dataset', 'split'] -%}
{%- set seed = var('seed', 20240612) -%}
{%- set keys = ['size', 'source', 'system', 'method', 'task', 'dataset', 'variant', 'experiment', 'position_unit', 'position',
                'split', 'metric', 'rule', 'metric_name'] -%}
with

run_groups as (
    {{ incremental_runs_to_compute(ref('loft_128k__int_run_fingerprints'), 'curves_fingerprint', group_keys) }}
),

run_turn_scores as (
    select * from {{ ref('loft_128k__int_turn_scores') }}
    semi join run_groups using ({{ group_keys | join(', ') }})
),

primary_scores as ({{ scoring_primary_turns('run_turn_scores') }}),

designed as (
    select primary_scores.*, variants.experiment, variants.position, variants.position_unit
    from primary_scores
    inner join {{ ref('loft_128k__prompt_variants') }} as variants using (task, dataset, variant)
    where variants.experiment is not null
),

measured as (
    select
        primary_scores.*,
        'loft_gold_depth' as experiment,
        floor(least(gold_depth, 0.9999) * 10) / 10 as position,
        'depth_decile' as position_unit
    from primary_scores
    anti join (select * from {{ ref('loft_128k__prompt_variants') }} where experiment is not null) using (task, dataset, variant)
    where task in ('retrieval', 'rag') and gold_depth is not null
),

points as (
    select * from designed
    union all by name
    select * from measured
),

curve_points as (
    {{ scoring_answered_means('points', keys, seed) }}
),

final as (
    select curve_points.* exclude ({{ group_keys | join(', ') }}), run_groups.*
    from run_groups
    left join curve_points using ({{ group_keys | join(', ') }})
)

select * from final
