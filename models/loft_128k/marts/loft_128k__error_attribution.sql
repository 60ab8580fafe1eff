{#
  error_attribution: a retrieval miss or a reading miss. One row per run (source, system,
  method), dataset, variant and split of a method whose earlier stage retrieves documents:
  each final scored turn (primary metric, loft rule) beside whether that stage found every gold
  document of the turn. n_retrieval_hit / n_retrieval_miss count the turns; accuracy_given_hit
  (with its 95% interval) is the reading accuracy when the documents were there,
  accuracy_given_miss what the final stage got right without them; n_reading_miss counts the
  hits answered wrong (score below 1). Turns without gold documents are left out.
#}
{%- set seed = var('seed', 20240612) -%}
{%- set run = ['size', 'source', 'system', 'method', 'task', 'dataset', 'variant', 'split'] -%}
with

retrieval_stage as (
    select source, system, method, task, dataset, variant, split, qid, turn, stage as retrieval_stage, found_all_gold
    from {{ ref('loft_128k__stage_retrieval') }}
    where not is_final and n_gold > 0
    qualify stage = min(stage) over (partition by source, system, method, task, dataset, variant, split, qid, turn)
),

final_scores as (
    select size, source, system, method, task, dataset, variant, split, qid, turn, metric_name, value
    from ({{ scoring_primary_loft_turns(ref('loft_128k__int_turn_scores')) }})
),

turns as (
    select final_scores.*, retrieval_stage.retrieval_stage, retrieval_stage.found_all_gold
    from final_scores
    inner join retrieval_stage using (source, system, method, task, dataset, variant, split, qid, turn)
),

given_hit as (
    {{ scoring_means('(select * from turns where found_all_gold)', run, [], seed) }}
),

counts as (
    select
        {{ run | join(', ') }},
        any_value(metric_name) as metric_name,
        any_value(retrieval_stage) as retrieval_stage,
        count(*) as n,
        count(*) filter (where found_all_gold) as n_retrieval_hit,
        count(*) filter (where not found_all_gold) as n_retrieval_miss,
        count(*) filter (where found_all_gold and value < 1) as n_reading_miss,
        {{ scoring_order_free_mean('value') }}::double as accuracy,
        ({{ scoring_order_free_mean('value') }} filter (where not found_all_gold))::double as accuracy_given_miss
    from turns
    group by all
),

final as (
    select
        counts.*,
        given_hit.mean::double as accuracy_given_hit,
        given_hit.ci_low as accuracy_given_hit_ci_low,
        given_hit.ci_high as accuracy_given_hit_ci_high
    from counts
    left join given_hit using ({{ run | join(', ') }})
)

select * from final
