{#
  example_curves: LOFT Figures 7 and 8, accuracy as the prompt holds more examples. One row
  per run (source, system, method), dataset, split and point, from metrics (the primary metric,
  loft rule, per turn): experiment loft_few_shot takes the few_shot_{k} variants (Figure 8, x =
  k few-shot examples), icl_context the many-shot context_{c} variants (Figure 7, x = the
  context's tokens, with how many of the dataset's examples that context holds and their share
  of all, the paper's "% of examples used"). n, mean and the interval are metrics'. A run is
  one with an answered (or pending) point; its points with no answered row keep their rows
  (run_status not_run, no mean). The figures print no numbers, so there is no paper value to
  set beside.
#}
with

points as (
    select
        *,
        case when variant like 'few_shot_%' then 'loft_few_shot' else 'icl_context' end as experiment,
        case
            when variant like 'few_shot_%' then regexp_extract(variant, '^few_shot_([0-9]+)$', 1)::bigint
            else regexp_extract(variant, '^context_([0-9]+)k$', 1)::bigint * 1000
        end as x
    from {{ ref('loft_128k__metrics') }}
    where is_primary and rule = 'loft' and grain = 'turn'
        and (regexp_full_match(variant, 'few_shot_[0-9]+') or regexp_full_match(variant, 'context_[0-9]+k'))
    qualify bool_or(run_status <> 'not_run') over (partition by size, source, system, method)
),

example_contexts as (
    select
        task,
        dataset,
        try_cast(replace(replace(min_context, 'k', '000'), 'm', '000000') as bigint) as context_tokens
    from {{ ref('loft_128k__corpus') }}
    where task = 'icl'
),

final as (
    select
        points.size,
        points.source,
        points.system,
        points.method,
        points.task,
        points.dataset,
        points.split,
        points.metric_name,
        points.experiment,
        points.variant,
        points.x,
        case when points.experiment = 'loft_few_shot' then 'few_shot_examples' else 'context_tokens' end as x_unit,
        case
            when points.experiment = 'loft_few_shot' then points.x
            else (
                select count(*) from example_contexts as e
                where e.task = points.task and e.dataset = points.dataset and e.context_tokens <= points.x
            )
        end as n_examples,
        case
            when points.experiment = 'icl_context' then (
                select count(*) filter (where e.context_tokens <= points.x) / nullif(count(*), 0)
                from example_contexts as e
                where e.task = points.task and e.dataset = points.dataset
            )
        end as examples_share,
        points.run_status,
        points.n,
        points.n_unanswered,
        points.mean,
        points.ci_low,
        points.ci_high,
        points.ci_method,
        points.query_limit
    from points
)

select * from final
