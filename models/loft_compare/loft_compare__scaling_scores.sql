-- depends_on: {{ ref('loft_32k__int_turn_scores') }}
-- depends_on: {{ ref('loft_128k__int_turn_scores') }}
-- depends_on: {{ ref('loft_1m__int_turn_scores') }}
-- depends_on: {{ ref('loft_32k__int_run_fingerprints') }}
-- depends_on: {{ ref('loft_128k__int_run_fingerprints') }}
-- depends_on: {{ ref('loft_1m__int_run_fingerprints') }}
{#
  scaling_scores: LOFT Figure 5's rows, query by query. Every primary score (loft rule, per
  turn) of every built size, one row per run (source, system, method, variant), query turn and
  size, so the same query can be followed from 32k to 128k to 1M (the corpora nest). sized is a
  list of (size, int_turn_scores relation) for the sizes built; n_sizes counts the sizes at which the
  run scored the query turn. Incremental by cross-size run: a build computes only the runs whose
  compare_fingerprint (compare_run_fingerprints: the run's scores at every size, this model's
  code) is not stored as a run_fingerprint, and drops the rows of runs whose fingerprint is gone.
#}
{%- set fingerprints = compare_run_fingerprints(compare_built_sizes('int_run_fingerprints', '_internal'), local_md5(model.raw_code)) -%}
{{ config(
    materialized='incremental',
    incremental_strategy='append',
    on_schema_change='append_new_columns',
    post_hook="{{ incremental_drop_stale_runs(compare_run_fingerprints(compare_built_sizes('int_run_fingerprints', '_internal'), local_md5(model.raw_code)), 'compare_fingerprint') }}"
) }}
{%- set sized = compare_built_sizes('int_turn_scores', '_internal') -%}
{%- set order = {'32k': 1, '128k': 2, '1m': 3} -%}
with

runs as ({{ incremental_runs_to_compute(fingerprints, 'compare_fingerprint') }}),

sized_scores as (
    {% for size, relation in sized %}
    select
        size,
        {{ order[size] }}::bigint as size_order,
        source, system, method, variant, task, dataset, split, qid, turn, metric_name, value, is_answered
    from ({{ scoring_primary_loft_turns(relation) }})
    semi join runs using (source, system, method, task, dataset, variant, split)
    {{ 'union all' if not loop.last }}
    {% endfor %}
    {% if not sized %}
    select
        null::varchar as size, null::bigint as size_order, null::varchar as source, null::varchar as system,
        null::varchar as method, null::varchar as variant, null::varchar as task, null::varchar as dataset,
        null::varchar as split, null::varchar as qid, null::bigint as turn, null::varchar as metric_name,
        null::double as value, null::boolean as is_answered
    where false
    {% endif %}
),

final as (
    select
        sized_scores.*,
        count(*) over (
            partition by source, system, method, variant, task, dataset, split, metric_name, qid, turn
        ) as n_sizes,
        runs.run_fingerprint
    from sized_scores
    inner join runs using (source, system, method, task, dataset, variant, split)
)

select * from final
