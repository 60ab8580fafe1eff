{#
  Aggregates over the scores table and the leaderboard beside the paper.
#}

{#
  A mean that is the same to the last bit however DuckDB splits the sum across threads: each
  value as DECIMAL(38, 18), summed in exact integer arithmetic (a DOUBLE sum depends on the order).
#}
{% macro scoring_order_free_mean(column) %}avg(({{ column }})::decimal(38, 18)){% endmacro %}


{#
  The standard error of the mean (sample standard deviation over sqrt(n); 0 for a single value),
  the same to the last bit however DuckDB splits the work: from exact DECIMAL sums of the values
  and their squares (stddev_samp's result depends on the order rows reach it).
#}
{% macro scoring_order_free_standard_error(column) -%}
    case when count({{ column }}) > 1 then sqrt(greatest(0.0,
        (sum((({{ column }}) * ({{ column }}))::decimal(38, 18))::double
         - pow(sum(({{ column }})::decimal(38, 18))::double, 2) / count({{ column }}))
        / (count({{ column }}) - 1))) / sqrt(count({{ column }})) else 0.0 end
{%- endmacro %}

{#
  Means of `value` per group of `keys`, with n and a 95% interval: Wilson when every value is 0
  or 1, else a seeded percentile bootstrap of the mean from how often each distinct value occurs.
  `aggregates` are further `expression as name` columns. Keys may be null.
#}
{% macro scoring_means(relation, keys, aggregates, seed) %}
with

{#- The bootstrap needs each distinct value and its count in ascending order, counted in the
    same pass (a second pass over the rows for the non-binary groups cost more than all the rest).
    histogram() would fold a NaN into another value; none gets there, as the mean's DECIMAL cast
    refuses NaN and infinity. #}
grouped as (
    select
        {{ keys | join(', ') }},
        {% for aggregate in aggregates %}{{ aggregate }},
        {% endfor %}count(*) as n,
        {{ scoring_order_free_mean('value') }} as mean,
        bool_and(value in (0, 1)) as is_binary,
        list_sort(map_entries(histogram(value))) as value_counts
    from {{ relation }}
    group by {{ keys | join(', ') }}
),

z as (select 1.959963984540054 as z),

intervals as (
    select
        grouped.*,
        case
            when is_binary then {
                'low': greatest(0.0, (mean + z * z / (2 * n) - z * sqrt(mean * (1 - mean) / n + z * z / (4 * n * n)))
                                     / (1 + z * z / n)),
                'high': least(1.0, (mean + z * z / (2 * n) + z * sqrt(mean * (1 - mean) / n + z * z / (4 * n * n)))
                                   / (1 + z * z / n)),
                'method': 'wilson'
            }
            else loft_counted_bootstrap_interval(
                list_transform(value_counts, lambda entry: entry.key),
                list_transform(value_counts, lambda entry: entry.value::bigint),
                {{ seed }}
            )
        end as interval
    from grouped
    cross join z
)

select
    * exclude (interval, is_binary, value_counts),
    interval.low as ci_low,
    interval.high as ci_high,
    interval.method as ci_method
from intervals
{% endmacro %}


{#
  The curve marts' points (position_curves, sql_operator_accuracy): scoring_means of `value` per
  group of `keys` with n_unanswered, and a quick try's query limit. A group that answered nothing
  has no accuracy there, so it is left out.
#}
{% macro scoring_answered_means(relation, keys, seed) %}
with

means as (
    {{ scoring_means(relation, keys, [
        'count(*) filter (where not is_answered) as n_unanswered',
        'max(query_limit) as query_limit',
    ], seed) }}
)

select
    {{ keys | join(', ') }},
    n,
    n_unanswered,
    mean,
    ci_low,
    ci_high,
    ci_method,
    query_limit
from means
where n_unanswered < n
{% endmacro %}


{# The rows of the scores view: int_turn_scores (or some of its rows) with the metric lists
   unnested, one row per metric. Unnested in the select list: as a lateral join, a filter on
   the view (one run's rows) made DuckDB plan a delim join over every column, 60x slower. #}
{% macro scoring_unnested_scores(turn_scores) -%}
    select
        size,
        source,
        system,
        method,
        stage,
        task,
        dataset,
        corpus_id,
        variant,
        split,
        qid,
        turn,
        n_turns,
        grain,
        gold_version,
        score.metric::varchar as metric,
        score.rule::varchar as rule,
        score.metric::varchar || '_' || score.rule::varchar as metric_name,
        score.value,
        status,
        is_answered,
        score.is_empty_answer,
        score.is_primary,
        gold_positions,
        gold_depth,
        gold_token_offset,
        n_documents,
        arm_id,
        query_limit
    from (select *, unnest(metric_values) as score from {{ turn_scores }}) as turn_scores
{%- endmacro %}


{# The rows of scores with is_primary (one per turn: grain turn), read from int_turn_scores'
   primary columns rather than by unnesting every metric of every turn. #}
{% macro scoring_primary_turns(turn_scores) -%}
    select
        * exclude (metric_values, primary_metric_name, primary_rule, primary_value),
        left(primary_metric_name, length(primary_metric_name) - length(primary_rule) - 1) as metric,
        primary_rule as rule,
        primary_metric_name as metric_name,
        primary_value as value
    from {{ turn_scores }}
    where primary_metric_name is not null
{%- endmacro %}


{# The rows of scores with is_primary, rule loft and grain turn (one per turn), read from
   int_turn_scores' primary columns rather than by unnesting every metric of every turn. #}
{% macro scoring_primary_loft_turns(turn_scores) -%}
    select
        * exclude (metric_values, primary_metric_name, primary_rule, primary_value),
        primary_metric_name as metric_name,
        primary_value as value
    from {{ turn_scores }}
    where grain = 'turn' and primary_rule = 'loft'
{%- endmacro %}

{#
  A paired difference whose per-query differences are all one value (n = 1, or the same answer
  at both arms, as Spider's byte-identical prompts across sizes give) has a zero-width bootstrap
  interval that claims certainty it does not have: such a difference gets no interval and this
  note instead. `spread` is false for them (min(d) = max(d)); null when there is no pair.
#}
{% macro scoring_no_information_note(spread, n, difference) -%}
    case when not ({{ spread }}) then 'no information: all ' || ({{ n }}) || ' paired differences are '
        || round(({{ difference }})::double, 4) || ', so resampling cannot size an interval' end
{%- endmacro %}
