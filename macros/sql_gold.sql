{#
  Gold SQL cross-check (issue 3): per Spider/SParC query turn, whether DuckDB (rewritten gold)
  and SQLite (reference) return the same rows, why not, and whether the turn may enter a split.
#}

{% macro sql_gold_agreement() %}
with

sql_gold as (select * from {{ loft_ref('stg_sql_gold') }}),

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
{% endmacro %}


{#
  Fails when DuckDB and SQLite agree on fewer than min_share of the turns whose gold both
  engines execute and whose result is well defined (not order-dependent, no arbitrary row).
#}
{% test sql_engines_agree(model, min_share) %}
with counted as (
    select
        count(*) filter (where both_executed and not gold_is_ambiguous) as n_checked,
        count(*) filter (where both_executed and not gold_is_ambiguous and engines_agree) as n_agree
    from {{ model }}
)
select * from counted
where n_checked = 0 or n_agree < {{ min_share }} * n_checked
{% endtest %}
