{#
  The scores analysts query: one row per (source, system, dataset, variant, query, turn, grain,
  metric, rule, gold_version), int_turn_scores with its metric lists unnested.
#}
with

turn_scores as (
    select * from {{ view_ref('loft_128k__int_turn_scores') }}
),

final as (
    {{ scoring_unnested_scores('turn_scores') }}
)

select * from final
