{#
  error_attribution: a retrieval miss or a reading miss. One row per run (source, system,
  method), dataset, variant and split of a method whose earlier stage retrieves documents:
  each final scored turn (primary metric, loft rule) beside how many gold documents of the turn
  that stage found. A hit found every gold document; a miss did not, and splits into partial
  (some found: HotpotQA's one of two) and none found. Each accuracy_given_* (with its 95%
  interval) is the final stage's accuracy over those turns; n_reading_miss counts the hits
  answered wrong (score below 1). Turns without gold documents are left out.
#}
{%- set seed = var('seed', 20240612) -%}
{%- set run = ['size', 'source', 'system', 'method', 'task', 'dataset', 'variant', 'split'] -%}
with

retrieval_stage as (
    select
        source, system, method, task, dataset, variant, split, qid, turn, stage as retrieval_stage, found_all_gold,
        case when found_all_gold then 'hit' when n_gold_found > 0 then 'partial' else 'none' end as retrieval_outcome
    from {{ ref('loft_128k__stage_retrieval') }}
    where not is_final and n_gold > 0
    qualify stage = min(stage) over (partition by source, system, method, task, dataset, variant, split, qid, turn)
),

final_scores as (
    select size, source, system, method, task, dataset, variant, split, qid, turn, metric_name, value
    from ({{ scoring_primary_loft_turns(ref('loft_128k__int_turn_scores')) }})
),

turns as (
    select final_scores.*, retrieval_stage.retrieval_stage, retrieval_stage.found_all_gold, retrieval_stage.retrieval_outcome
    from final_scores
    inner join retrieval_stage using (source, system, method, task, dataset, variant, split, qid, turn)
),

given_outcome as (
    {{ scoring_means('turns', run + ['retrieval_outcome'], [], seed) }}
),

given_miss as (
    {{ scoring_means('(select * from turns where not found_all_gold)', run, [], seed) }}
),

counts as (
    select
        {{ run | join(', ') }},
        any_value(metric_name) as metric_name,
        any_value(retrieval_stage) as retrieval_stage,
        count(*) as n,
        count(*) filter (where found_all_gold) as n_retrieval_hit,
        count(*) filter (where not found_all_gold) as n_retrieval_miss,
        count(*) filter (where retrieval_outcome = 'partial') as n_retrieval_partial,
        count(*) filter (where retrieval_outcome = 'none') as n_retrieval_none,
        count(*) filter (where found_all_gold and value < 1) as n_reading_miss,
        {{ scoring_order_free_mean('value') }}::double as accuracy
    from turns
    group by all
),

final as (
    select
        counts.*,
        given_miss.mean::double as accuracy_given_miss,
        given_miss.ci_low as accuracy_given_miss_ci_low,
        given_miss.ci_high as accuracy_given_miss_ci_high,
        {%- for outcome in ['hit', 'partial', 'none'] %}
        given_{{ outcome }}.mean::double as accuracy_given_{{ outcome }},
        given_{{ outcome }}.ci_low as accuracy_given_{{ outcome }}_ci_low,
        given_{{ outcome }}.ci_high as accuracy_given_{{ outcome }}_ci_high{{ ',' if not loop.last }}
        {%- endfor %}
    from counts
    left join given_miss using ({{ run | join(', ') }})
    {%- for outcome in ['hit', 'partial', 'none'] %}
    left join given_outcome as given_{{ outcome }}
        on {% for key in run %}given_{{ outcome }}.{{ key }} = counts.{{ key }} and {% endfor %}given_{{ outcome }}.retrieval_outcome = '{{ outcome }}'
    {%- endfor %}
)

select * from final
