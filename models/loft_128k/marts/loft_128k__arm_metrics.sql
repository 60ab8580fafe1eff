{#
  arm_metrics: metrics with the settings of each row's arm (arms) beside it, so one query pivots
  two sweeps of a method (reprompt_r5000 and reprompt_r20000, few_shot_0 .. few_shot_5) by their
  numbers. Imported runs (method cic) take the arm of the prompts they answer where the build
  has them; otherwise the arm columns are null.
#}
with

final as (
    select metrics.*, arms.* exclude (size, task, dataset, variant, method)
    from {{ view_ref('loft_128k__metrics') }} as metrics
    left join {{ view_ref('loft_128k__arms') }} as arms using (task, dataset, variant, method)
)

select * from final
