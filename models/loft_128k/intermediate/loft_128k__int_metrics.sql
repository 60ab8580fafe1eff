{#
  int_metrics: one row per (source, system, method, dataset, variant, split, metric, rule, gold_version,
  grain):
  the mean over turn rows (conversation rows for grain 'conversation'), n, how many were
  unanswered (status not 'ok', scored 0) or answered but empty under the rule, a 95% interval
  (scoring_means), and where the gold sat when every row of the group has it at the same place.
  A group with no answered row (skipped for credentials or length, or every call failed) is
  run_status 'not_run' with no mean and no interval: it is not a score of 0. A group with rows
  still in a provider batch (status batch_pending) is 'pending', also without a mean: a later
  build collects the batch and scores it. Incremental by run, as int_turn_scores: a build
  aggregates only the runs whose aggregates_fingerprint (int_run_fingerprints) is not yet stored
  as a run_fingerprint, and drops the rows of runs whose fingerprint is gone; the metrics mart
  is these rows.
#}
{{ config(
    materialized='incremental',
    incremental_strategy='append',
    on_schema_change='append_new_columns',
    post_hook="{{ incremental_drop_stale_runs(ref('loft_128k__int_run_fingerprints'), 'aggregates_fingerprint') }}"
) }}
{%- set seed = var('seed', 20240612) -%}
{%- set keys = ['size', 'source', 'system', 'method', 'task', 'dataset', 'variant', 'split', 'metric', 'rule',
                'gold_version', 'grain'] -%}
with

runs as ({{ incremental_runs_to_compute(ref('loft_128k__int_run_fingerprints'), 'aggregates_fingerprint') }}),

run_turn_scores as (
    select * from {{ ref('loft_128k__int_turn_scores') }}
    semi join runs using (source, system, method, task, dataset, variant, split)
),

run_scores as ({{ scoring_unnested_scores('run_turn_scores') }}),

means as (
    {{ scoring_means('run_scores', keys, [
        'bool_or(is_primary) as is_primary',
        'count(*) filter (where not is_answered) as n_unanswered',
        'count(*) filter (where status = \'batch_pending\') as n_pending',
        'count(*) filter (where is_empty_answer) as n_empty_answer',
        'case when min(gold_positions[1]) = max(gold_positions[1]) then min(gold_positions[1]) end as gold_position',
        'case when min(gold_depth) = max(gold_depth) then min(gold_depth) end as gold_depth',
        'avg(gold_token_offset) as gold_token_offset_mean',
        'any_value(arm_id) as arm_id',
        'max(query_limit) as query_limit',
    ], seed) }}
),

final as (
    select
        {{ keys[:-1] | join(', ') }},
        metric || '_' || rule as metric_name,
        grain,
        is_primary,
        case when n_pending > 0 then 'pending' when n_unanswered < n then 'scored' else 'not_run' end as run_status,
        n,
        n_unanswered,
        n_pending,
        n_empty_answer,
        case when n_pending = 0 and n_unanswered < n then mean end as mean,
        case when n_pending = 0 and n_unanswered < n then ci_low end as ci_low,
        case when n_pending = 0 and n_unanswered < n then ci_high end as ci_high,
        case when n_pending = 0 and n_unanswered < n then ci_method end as ci_method,
        gold_position,
        gold_depth,
        gold_token_offset_mean,
        query_limit,
        arm_id,
        runs.run_fingerprint
    from means
    inner join runs using (source, system, method, task, dataset, variant, split)
)

select * from final
