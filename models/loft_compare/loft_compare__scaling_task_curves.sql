{#
  scaling_task_curves: LOFT Figure 5 as the paper plots it, "averaged over all constituent
  datasets in each task": one row per run (source, system, method, variant), task, split and
  size from scaling_curves, the mean of its datasets' means (each dataset weighs the same) with
  a normal 95% interval from the datasets' standard errors (independent samples: the variance of
  an average of D means is the sum of their variances over D squared), and the average of the
  datasets' paired differences from the task's next smaller size over the datasets scored at
  both, with its interval alike (none, and difference_note, when no dataset's differences vary).
  datasets says which were averaged.
#}
{%- set run = ['source', 'system', 'method', 'variant', 'task', 'split'] -%}
with

curves as (select * from {{ ref('loft_compare__scaling_curves') }}),

sized as (
    select
        {{ run | join(', ') }},
        size,
        any_value(size_order) as size_order,
        count(*) as n_datasets,
        list(dataset order by dataset) as datasets,
        sum(n)::bigint as n,
        avg(mean) as mean,
        sqrt(sum(standard_error * standard_error)) / count(*) as standard_error
    from curves
    group by all
),

ordered as (
    select
        *,
        lag(size) over (partition by {{ run | join(', ') }} order by size_order) as previous_size
    from sized
),

differences as (
    select
        {% for key in run %}ordered.{{ key }}, {% endfor %}
        ordered.size,
        count(*) as n_datasets_compared,
        sum(curves.n_common_with_previous)::bigint as n_common,
        avg(curves.difference_from_previous) as difference,
        sqrt(sum(curves.difference_standard_error * curves.difference_standard_error)) / count(*) as standard_error,
        bool_or(curves.difference_note is null) as has_spread
    from ordered
    inner join curves
        on {% for key in run %}curves.{{ key }} = ordered.{{ key }} and {% endfor %}curves.size = ordered.size
        and curves.previous_size = ordered.previous_size
        and curves.n_common_with_previous > 0
    group by all
),

final as (
    select
        {% for key in run %}ordered.{{ key }}, {% endfor %}
        ordered.size,
        ordered.size_order,
        ordered.n_datasets,
        ordered.datasets,
        ordered.n,
        ordered.mean::double as mean,
        greatest(0.0, ordered.mean - 1.959963984540054 * ordered.standard_error)::double as ci_low,
        least(1.0, ordered.mean + 1.959963984540054 * ordered.standard_error)::double as ci_high,
        ordered.previous_size,
        differences.n_datasets_compared,
        differences.n_common as n_common_with_previous,
        differences.difference::double as difference_from_previous,
        case when differences.has_spread
            then (differences.difference - 1.959963984540054 * differences.standard_error)::double end as difference_ci_low,
        case when differences.has_spread
            then (differences.difference + 1.959963984540054 * differences.standard_error)::double end as difference_ci_high,
        case when not differences.has_spread then 'no information: each compared dataset''s paired differences are all one value (see scaling_curves.difference_note)' end as difference_note
    from ordered
    left join differences
        on {% for key in run %}differences.{{ key }} = ordered.{{ key }} and {% endfor %}differences.size = ordered.size
)

select * from final
