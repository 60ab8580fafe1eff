{#
  paired_comparisons: every two runs ("arms": source, system, method, variant) scored on one
  dataset, split and primary metric (loft rule, per turn), compared query by query. The
  difference is mean(b) - mean(a) over the same query turns, with a seeded paired bootstrap
  95% interval (the per-query differences resampled together) and, when both arms score 0/1,
  McNemar's exact two-sided p-value over the discordant queries; no interval, and a note, when
  every per-query difference is the same. Arms scored on different
  query turns are listed with is_same_queries false and no difference: they are not compared.
  Arms with no answered row (not run) are left out.
#}
{%- set seed = var('seed', 20240612) -%}
{%- set arm = ['source', 'system', 'method', 'variant'] -%}
{%- set scope = ['size', 'task', 'dataset', 'split', 'metric_name'] -%}
with

primary_scores as (
    select {{ (scope + arm) | join(', ') }}, qid, turn, value, is_answered
    from ({{ scoring_primary_loft_turns(ref('loft_128k__int_turn_scores')) }})
),

arms as (
    select
        {{ (scope + arm) | join(', ') }},
        count(*) as n,
        {{ scoring_order_free_mean('value') }} as mean,
        bool_and(value in (0, 1)) as is_binary
    from primary_scores
    group by all
    having bool_or(is_answered)
),

pairs as (
    select
        {% for key in scope %}a.{{ key }},
        {% endfor %}{% for key in arm %}a.{{ key }} as {{ key }}_a, b.{{ key }} as {{ key }}_b,
        {% endfor %}a.n as n_a,
        b.n as n_b,
        a.mean as mean_a,
        b.mean as mean_b,
        a.is_binary and b.is_binary as is_binary
    from arms as a
    inner join arms as b
        on {% for key in scope %}a.{{ key }} = b.{{ key }}{{ ' and ' if not loop.last }}{% endfor %}
        and ({% for key in arm %}a.{{ key }}{{ ', ' if not loop.last }}{% endfor %})
            < ({% for key in arm %}b.{{ key }}{{ ', ' if not loop.last }}{% endfor %})
),

matched as (
    select
        {% for key in scope %}pairs.{{ key }}, {% endfor %}
        {% for key in arm %}pairs.{{ key }}_a, pairs.{{ key }}_b, {% endfor %}
        count(*) as n_common,
        list(sb.value - sa.value order by sa.qid, sa.turn) as differences,
        count(*) filter (where sa.value = 1 and sb.value = 0) as n_only_a,
        count(*) filter (where sa.value = 0 and sb.value = 1) as n_only_b
    from pairs
    inner join primary_scores as sa
        on {% for key in scope %}sa.{{ key }} = pairs.{{ key }} and {% endfor %}
           {% for key in arm %}sa.{{ key }} = pairs.{{ key }}_a{{ ' and ' if not loop.last }}{% endfor %}
    inner join primary_scores as sb
        on {% for key in scope %}sb.{{ key }} = pairs.{{ key }} and {% endfor %}
           {% for key in arm %}sb.{{ key }} = pairs.{{ key }}_b and {% endfor %}
           sb.qid = sa.qid and sb.turn = sa.turn
    group by all
),

final as (
    select
        pairs.*,
        coalesce(matched.n_common, 0) as n_common,
        pairs.n_a = coalesce(matched.n_common, 0) and pairs.n_b = coalesce(matched.n_common, 0) as is_same_queries,
        matched.differences,
        list_min(matched.differences) < list_max(matched.differences) as has_spread,
        matched.n_only_a,
        matched.n_only_b
    from pairs
    left join matched
        using ({{ scope | join(', ') }}, {% for key in arm %}{{ key }}_a, {{ key }}_b{{ ', ' if not loop.last }}{% endfor %})
)

select
    {{ scope | join(', ') }},
    {% for key in arm %}{{ key }}_a, {% endfor %}
    {% for key in arm %}{{ key }}_b, {% endfor %}
    n_a,
    n_b,
    n_common,
    is_same_queries,
    case when is_same_queries then mean_a end as mean_a,
    case when is_same_queries then mean_b end as mean_b,
    case when is_same_queries then mean_b - mean_a end as difference,
    case when is_same_queries and has_spread then loft_bootstrap_interval(differences, {{ seed }}).low end as difference_ci_low,
    case when is_same_queries and has_spread then loft_bootstrap_interval(differences, {{ seed }}).high end as difference_ci_high,
    case when is_same_queries and is_binary then n_only_a end as n_only_a,
    case when is_same_queries and is_binary then n_only_b end as n_only_b,
    case when is_same_queries and is_binary then loft_mcnemar_exact(n_only_a, n_only_b) end as mcnemar_p,
    case
        when not is_same_queries then 'not compared: the arms were scored on different query turns ('
            || n_a || ' and ' || n_b || ', ' || n_common || ' in common)'
        else {{ scoring_no_information_note('has_spread', 'n_common', 'mean_b - mean_a') }}
    end as note
from final
