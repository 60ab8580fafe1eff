{#
  The queries scoring reads: the size's queries, with their dataset's is_multi_answer, and the
  queries of LOFT answer files landed with `loft import-predictions --queries`.
#}
with

built as (
    select queries.*, coalesce(datasets.is_multi_answer, false) as is_multi_answer
    from {{ view_ref('loft_128k__queries') }} as queries
    left join {{ view_ref('loft_128k__stg_datasets') }} as datasets using (task, dataset)
),

final as (
    select * from built
    union all by name
    select * from {{ view_ref('loft_128k__int_imported_queries') }}
)

select * from final
