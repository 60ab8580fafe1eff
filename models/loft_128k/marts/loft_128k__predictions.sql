{#
  predictions: int_predictions with the lists it stores once given back to every column.
  pred_pids_* exist for retrieval and mm rows only (NULL otherwise).
#}
with

stored as (
    select * exclude (run_fingerprint) from {{ view_ref('loft_128k__int_predictions') }}
),

loft_pids as (
    select
        * replace (case when task in {{ scoring_id_tasks() }} then coalesce(pred_pids_loft, answer_loft) end as pred_pids_loft)
    from stored
),

final as (
    select
        * replace (
            coalesce(answer_strict, answer_loft) as answer_strict,
            coalesce(answer_strict_json, answer_loft_json) as answer_strict_json,
            case when task in {{ scoring_id_tasks() }} then coalesce(pred_pids_strict, pred_pids_loft) end as pred_pids_strict
        )
    from loft_pids
)

select * from final
