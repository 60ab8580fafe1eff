{#
  sql_operator_accuracy: LOFT Figure 6 (seed 000, §4.5). SQL execution accuracy (per turn, loft
  and strict rules) binned by the operators of each turn's gold SQL, read from its sqlglot tree
  (loft_sql_operators, python/loft_warehouse/sql/operators.py): a turn counts in every bin it
  uses (min and max share a bin, as >, <, >= and <= do), `no_operator` when it uses none, and
  `all` holds every turn so a bin reads against the whole. n, mean and 95% interval as in
  metrics; bins with no answered row are left out. The figure prints no numbers, so there is
  no paper value to set beside.
#}
{%- set seed = var('seed', 20240612) -%}
{%- set keys = ['size', 'source', 'system', 'method', 'task', 'dataset', 'variant', 'split', 'metric', 'rule',
                'metric_name', 'operator'] -%}
with

sql_scores as (
    select * from {{ ref('loft_128k__scores') }}
    where task = 'sql' and metric = 'exec_acc' and grain = 'turn'
),

sql_queries as (
    select task, dataset, split, qid, turn, gold_sql from {{ ref('loft_128k__queries') }} where task = 'sql'
),

operators_by_sql as (
    select gold_sql, loft_sql_operators(gold_sql) as operators
    from (select distinct gold_sql from sql_queries)
),

gold_operators as (
    select sql_queries.*, operators_by_sql.operators
    from sql_queries
    inner join operators_by_sql on operators_by_sql.gold_sql is not distinct from sql_queries.gold_sql
),

points as (
    select sql_scores.*, unnest(list_prepend('all', gold_operators.operators)) as operator
    from sql_scores
    inner join gold_operators using (task, dataset, split, qid, turn)
),

final as (
    {{ scoring_answered_means('points', keys, seed) }}
)

select * from final
