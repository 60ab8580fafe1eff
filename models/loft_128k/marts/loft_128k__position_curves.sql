{#
  position_curves: accuracy by gold position, ready to plot, the points int_position_curves
  keeps by run group (see there for the rows; a group without a point has none here).
#}
with

curve_points as (
    select * from {{ ref('loft_128k__int_position_curves') }}
),

final as (
    select * exclude (run_fingerprint) from curve_points where experiment is not null
)

select * from final
