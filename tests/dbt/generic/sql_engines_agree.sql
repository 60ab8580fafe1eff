{#
  Fails when DuckDB agrees with SQLite on fewer than min_share of the gold turns that SQLite
  executes (the issue's measure; ambiguous gold included), or when gold turns exist but none
  could be checked. A build without SQL datasets has no rows and passes.
#}
{% test sql_engines_agree(model, min_share) %}
with counted as (
    select
        count(*) as n_turns,
        count(*) filter (where sqlite_status <> 'error') as n_checked,
        count(*) filter (where sqlite_status <> 'error' and engines_agree) as n_agree
    from {{ model }}
)
select * from counted
where (n_turns > 0 and n_checked = 0) or n_agree < {{ min_share }} * n_checked
{% endtest %}
