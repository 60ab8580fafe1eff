{#
  metrics: one row per (source, system, method, dataset, variant, split, metric, rule, gold_version,
  grain), the means and intervals int_metrics keeps by run (see there for the rows), with the
  run's generation budget and answer health beside each (int_answer_health).
#}
with

run_metrics as (
    select * from {{ ref('loft_128k__int_metrics') }}
),

answer_health as (
    select * from {{ ref('loft_128k__int_answer_health') }}
),

final as (
    select
        run_metrics.* exclude (run_fingerprint),
        answer_health.* exclude (source, system, method, task, dataset, variant, split)
    from run_metrics
    left join answer_health using (source, system, method, task, dataset, variant, split)
)

select * from final
