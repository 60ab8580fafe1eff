{#
  The queries scoring reads: the size's queries, with their dataset's is_multi_answer, the
  multimodal release's queries (task mm, one turn, gold the answers' pids), and the queries of
  LOFT answer files landed with `loft import-predictions --queries` (landed_fingerprint says
  which file they came from; null for the others).
#}
with

built as (
    select queries.*, coalesce(datasets.is_multi_answer, false) as is_multi_answer
    from {{ view_ref('loft_128k__queries') }} as queries
    left join {{ view_ref('loft_128k__stg_datasets') }} as datasets using (task, dataset)
),

multimodal as (
    select
        'mm' as task,
        dataset,
        dataset as corpus_id,
        split,
        qid,
        qid as upstream_qid,
        0::bigint as turn,
        1::bigint as n_turns,
        query_text,
        to_json(gold_pids)::varchar as gold,
        gold_pids,
        row_number() over (partition by dataset, split order by source_row) - 1 as query_rank,
        false as is_multi_answer
    from {{ view_ref('loft_128k__stg_mm_queries') }}
),

final as (
    select * from built
    union all by name
    select * from multimodal
    union all by name
    select * from {{ view_ref('loft_128k__int_imported_queries') }}
)

select * from final
