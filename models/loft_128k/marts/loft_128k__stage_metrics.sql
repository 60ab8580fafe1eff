{#
  stage_metrics: the means of stage_retrieval per run, stage, dataset, variant and split, one
  row per measure (recall, precision, found_all_gold, recall_at_k), with n and the 95% interval as
  in metrics. Turns without gold documents are left out (they have nothing to find); precision
  counts only the turns that retrieved something.
#}
{%- set seed = var('seed', 20240612) -%}
{%- set measures = ['recall', 'precision', 'found_all_gold', 'recall_at_1', 'recall_at_5', 'recall_at_10', 'recall_at_20',
                    'recall_at_50', 'recall_at_100'] -%}
{%- set keys = ['size', 'source', 'system', 'method', 'stage', 'is_final', 'id_kind', 'task', 'dataset', 'variant',
                'split', 'measure'] -%}
with

values_by_measure as (
    {% for measure in measures %}
    select
        size, source, system, method, stage, is_final, id_kind, task, dataset, variant, split, is_answered,
        '{{ measure }}' as measure,
        {{ measure }}::double as value
    from {{ ref('loft_128k__stage_retrieval') }}
    where n_gold > 0 and {{ measure }} is not null
    {{ 'union all' if not loop.last }}
    {% endfor %}
),

means as (
    {{ scoring_means('values_by_measure', keys, ['count(*) filter (where not is_answered) as n_unanswered'], seed) }}
),

final as (
    select {{ keys | join(', ') }}, n, n_unanswered, mean::double as mean, ci_low, ci_high, ci_method
    from means
)

select * from final
