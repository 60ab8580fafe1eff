-- depends_on: {{ ref('loft_32k__int_turn_scores') }}
-- depends_on: {{ ref('loft_128k__int_turn_scores') }}
-- depends_on: {{ ref('loft_1m__int_turn_scores') }}
{#
  scaling_sizes: which sizes the cross-size tables read. One row per benchmark size: whether its
  schema holds built scores (int_turn_scores), how many answered primary turns and runs it holds, and
  how to build it when it is missing.
#}
{%- set sized = compare_built_sizes('int_turn_scores', '_internal') -%}
with

sizes as (
    select * from (values ('32k', 1), ('128k', 2), ('1m', 3)) as sizes(size, size_order)
),

built as (
    {% for size, relation in sized %}
    select
        '{{ size }}' as size,
        count(*) filter (where is_answered) as n_answered_turns,
        count(distinct (source, system, method, variant)) filter (where is_answered) as n_runs
    from ({{ scoring_primary_loft_turns(relation) }})
    {{ 'union all' if not loop.last }}
    {% endfor %}
    {% if not sized %}
    select null::varchar as size, null::bigint as n_answered_turns, null::bigint as n_runs where false
    {% endif %}
),

final as (
    select
        sizes.size,
        sizes.size_order::bigint as size_order,
        'loft_' || sizes.size as schema_name,
        built.size is not null as is_built,
        coalesce(built.n_answered_turns, 0)::bigint as n_answered_turns,
        coalesce(built.n_runs, 0)::bigint as n_runs,
        case
            when built.size is null
                then 'not built: dbt build --select loft_' || sizes.size || ', then dbt build --select loft_compare'
        end as note
    from sizes
    left join built using (size)
)

select * from final order by size_order
