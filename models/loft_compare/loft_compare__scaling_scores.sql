-- depends_on: {{ ref('loft_32k__int_turn_scores') }}
-- depends_on: {{ ref('loft_128k__int_turn_scores') }}
-- depends_on: {{ ref('loft_1m__int_turn_scores') }}
{#
  scaling_scores: LOFT Figure 5's rows, query by query. Every primary score (loft rule, per
  turn) of every built size, one row per run (source, system, method, variant), query turn and
  size, so the same query can be followed from 32k to 128k to 1M (the corpora nest). sized is a
  list of (size, int_turn_scores relation) for the sizes built; n_sizes counts the sizes at which the
  run scored the query turn.
#}
{%- set sized = compare_built_sizes('int_turn_scores', '_internal') -%}
{%- set order = {'32k': 1, '128k': 2, '1m': 3} -%}
with

sized_scores as (
    {% for size, relation in sized %}
    select
        size,
        {{ order[size] }}::bigint as size_order,
        source, system, method, variant, task, dataset, split, qid, turn, metric_name, value, is_answered
    from ({{ scoring_primary_loft_turns(relation) }})
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
        *,
        count(*) over (
            partition by source, system, method, variant, task, dataset, split, metric_name, qid, turn
        ) as n_sizes
    from sized_scores
)

select * from final
