{#
  Gold SQL cross-check (issue 3): per Spider/SParC query turn, whether DuckDB (rewritten gold)
  and SQLite (reference) return the same rows, why not, and whether the turn may enter a split.
#}

with

sql_gold as (select * from {{ ref('loft_128k__stg_sql_gold') }}),

final as (
    select
        dataset,
        qid,
        turn,
        db_id,
        status as duckdb_status,
        sqlite_status,
        n_rows,
        has_order_by,
        has_order_ties,
        agree_multiset,
        agree_ordered,
        status <> 'error' and sqlite_status <> 'error' as both_executed,
        coalesce(exclusion_reason in ('order_dependent', 'arbitrary_row'), false) as gold_is_ambiguous,
        coalesce(agree_multiset and coalesce(agree_ordered or has_order_ties, true), false) as engines_agree,
        disagreement_cause,
        eligible,
        exclusion_reason,
        query_eligible,
        error,
        gold_sql,
        duckdb_sql,
        sqlite_sql
    from sql_gold
)

select * from final
