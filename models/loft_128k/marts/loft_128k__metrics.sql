{#
  metrics: one row per (source, system, method, dataset, variant, split, metric, rule, gold_version,
  grain), the means and intervals int_metrics keeps by run (see there for the rows).
#}
with

run_metrics as (
    select * from {{ ref('loft_128k__int_metrics') }}
),

final as (
    select * exclude (run_fingerprint) from run_metrics
)

select * from final
