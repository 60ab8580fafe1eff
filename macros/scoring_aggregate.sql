{#
  Aggregates over the scores table and the leaderboard beside the paper.
#}

{#
  A mean that is the same to the last bit however DuckDB splits the sum across threads: each
  value as DECIMAL(38, 18), summed in exact integer arithmetic (a DOUBLE sum depends on the order).
#}
{% macro scoring_order_free_mean(column) %}avg(({{ column }})::decimal(38, 18)){% endmacro %}

{#
  Means of `value` per group of `keys`, with n and a 95% interval: Wilson when every value is 0
  or 1, else a seeded percentile bootstrap of the mean from how often each distinct value occurs.
  `aggregates` are further `expression as name` columns. Keys may be null (joins are null-safe).
#}
{% macro scoring_means(relation, keys, aggregates, seed) %}
with

grouped as (
    select
        {{ keys | join(', ') }},
        {% for aggregate in aggregates %}{{ aggregate }},
        {% endfor %}count(*) as n,
        {{ scoring_order_free_mean('value') }} as mean,
        bool_and(value in (0, 1)) as is_binary
    from {{ relation }}
    group by {{ keys | join(', ') }}
),

{# The bootstrap needs each distinct value and its count, in ascending order: only for non-binary groups. #}
value_counts as (
    select
        {% for key in keys %}rows.{{ key }},
        {% endfor %}rows.value,
        count(*) as occurrences
    from {{ relation }} as rows
    semi join (select * from grouped where not is_binary) as g
        on {% for key in keys %}rows.{{ key }} is not distinct from g.{{ key }}{{ ' and ' if not loop.last }}{% endfor %}
    group by {% for key in keys %}rows.{{ key }}, {% endfor %}rows.value
),

continuous as (
    select
        {{ keys | join(', ') }},
        list(value order by value) as distinct_values,
        list(occurrences order by value) as counts
    from value_counts
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
            else loft_counted_bootstrap_interval(continuous.distinct_values, continuous.counts, {{ seed }})
        end as interval
    from grouped
    left join continuous
        on {% for key in keys %}grouped.{{ key }} is not distinct from continuous.{{ key }}{{ ' and ' if not loop.last }}{% endfor %}
    cross join z
)

select
    * exclude (interval, is_binary),
    interval.low as ci_low,
    interval.high as ci_high,
    interval.method as ci_method
from intervals
{% endmacro %}


{#
  metrics: one row per (source, system, method, dataset, variant, split, metric, rule, gold_version,
  grain):
  the mean over turn rows (conversation rows for grain 'conversation'), n, how many were
  unanswered (status not 'ok', scored 0) or answered but empty under the rule, a 95% interval
  (scoring_means), and where the gold sat when every row of the group has it at the same place.
  A group with no answered row (skipped for credentials or length, or every call failed) is
  run_status 'not_run' with no mean and no interval: it is not a score of 0. A group with rows
  still in a provider batch (status batch_pending) is 'pending', also without a mean: a later
  build collects the batch and scores it.
#}
{% macro scoring_metrics(scores=none, seed=none) %}
{%- set scores = scores or loft_ref('scores') -%}
{%- set seed = seed if seed is not none else var('seed', 20240612) -%}
{%- set keys = ['size', 'source', 'system', 'method', 'task', 'dataset', 'variant', 'split', 'metric', 'rule',
                'gold_version', 'grain'] -%}
with

means as (
    {{ scoring_means(scores, keys, [
        'bool_or(is_primary) as is_primary',
        'count(*) filter (where not is_answered) as n_unanswered',
        'count(*) filter (where status = \'batch_pending\') as n_pending',
        'count(*) filter (where is_empty_answer) as n_empty_answer',
        'case when min(gold_positions[1]) = max(gold_positions[1]) then min(gold_positions[1]) end as gold_position',
        'case when min(gold_depth) = max(gold_depth) then min(gold_depth) end as gold_depth',
        'avg(gold_token_offset) as gold_token_offset_mean',
        'any_value(arm_id) as arm_id',
        'max(query_limit) as query_limit',
    ], seed) }}
)

select
    {{ keys[:-1] | join(', ') }},
    metric || '_' || rule as metric_name,
    grain,
    is_primary,
    case when n_pending > 0 then 'pending' when n_unanswered < n then 'scored' else 'not_run' end as run_status,
    n,
    n_unanswered,
    n_pending,
    n_empty_answer,
    case when n_pending = 0 and n_unanswered < n then mean end as mean,
    case when n_pending = 0 and n_unanswered < n then ci_low end as ci_low,
    case when n_pending = 0 and n_unanswered < n then ci_high end as ci_high,
    case when n_pending = 0 and n_unanswered < n then ci_method end as ci_method,
    gold_position,
    gold_depth,
    gold_token_offset_mean,
    query_limit,
    arm_id
from means
{% endmacro %}


{#
  position_curves: accuracy by gold position, ready to plot. One row per (system, method,
  dataset, experiment, position, split, metric, rule) over the dataset's primary metric:
  - designed positions: every prompt variant that places the gold (prompt_variants.experiment:
    LOFT's gold_pos_* variants in percent of the corpus, Lost in the Middle's gold document
    index and queried-key index, R&R's answer position in tokens), with the studies' reference
    settings (closed_book, oracle) as their own experiments at a null position;
  - measured positions: every other run on a LOFT retrieval or RAG prompt (the default variant
    included), by the decile of the first gold document's depth in the corpus
    (experiment loft_gold_depth, position 0.0, 0.1, ..., 0.9), so Figure 4/9-style curves come
    from any run.
  n, mean and the 95% interval as in metrics; points with no answered row are left out.
#}
{% macro scoring_position_curves(scores=none, variants=none, seed=none) %}
{%- set scores = scores or loft_ref('scores') -%}
{%- set variants = variants or loft_ref('prompt_variants') -%}
{%- set seed = seed if seed is not none else var('seed', 20240612) -%}
{%- set keys = ['size', 'source', 'system', 'method', 'task', 'dataset', 'experiment', 'position_unit', 'position',
                'split', 'metric', 'rule', 'metric_name'] -%}
with

primary_scores as (
    select * from {{ scores }} where is_primary
),

designed as (
    select primary_scores.*, variants.experiment, variants.position, variants.position_unit
    from primary_scores
    inner join {{ variants }} as variants using (task, dataset, variant)
    where variants.experiment is not null
),

measured as (
    select
        primary_scores.*,
        'loft_gold_depth' as experiment,
        floor(least(gold_depth, 0.9999) * 10) / 10 as position,
        'depth_decile' as position_unit
    from primary_scores
    anti join (select * from {{ variants }} where experiment is not null) using (task, dataset, variant)
    where task in ('retrieval', 'rag') and gold_depth is not null
),

points as (
    select * from designed
    union all by name
    select * from measured
),

final as (
    {{ scoring_answered_means('points', keys, seed) }}
)

select * from final
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


{#
  The leaderboard: paper Table 2 (LOFT 128k test; Gemini 1.5 Pro, GPT-4o, Claude 3 Opus and
  the specialized models) beside this warehouse's default-variant results, per dataset and
  metric. Warehouse rows are the loft-rule, per-turn means of each dataset's primary metric and
  of the metric the paper reports for it (they differ for MS MARCO here: recall@1 in the paper,
  MRecall@5 as built from BEIR qrels). Paper rows, full warehouse runs and quick tries (a run
  sent with var limit N: query_limit N, scored on its first N queries only) are ranked apart
  (rank_group): they come from other corpora, splits or query sets, which corpus_origin names. Runs with
  no answered row (metrics.run_status 'not_run') are left out, and so is the planted-effects test
  system (source 'planted'). source is 'paper', or where warehouse rows came from: 'inference'
  (runs of the systems) or 'import' (prediction files).
#}
{% macro scoring_leaderboard(metrics=none, paper=none, datasets=none) %}
{%- set metrics = metrics or loft_ref('metrics') -%}
{%- set paper = paper or loft_ref('paper_table2') -%}
{%- set datasets = datasets or loft_ref('stg_datasets') -%}
with

paper as (
    select
        task::varchar as task,
        dataset::varchar as dataset,
        paper_dataset::varchar as paper_dataset,
        model::varchar as system,
        metric::varchar as metric,
        value::double as value
    from {{ paper }}
),

paper_metric as (
    select distinct task, dataset, paper_dataset, metric from paper
),

origins as (
    select task, dataset, source as corpus_source from {{ datasets }}
),

warehouse as (
    select
        m.source,
        case when m.query_limit is null then 'warehouse' else 'quick_try' end as rank_group,
        'this warehouse: ' || m.size || ' ' || m.split || ' split'
            || case when m.query_limit is not null
                    then ', quick try of its first ' || m.query_limit || ' queries' else '' end
            || ', corpus built from '
            || case
                when o.corpus_source = 'loft_release' then 'the LOFT release files'
                when o.corpus_source is not null then o.corpus_source
                when m.source = 'import' then 'the imported queries file'
                else 'an unregistered source'
            end
            as corpus_origin,
        m.task,
        m.dataset,
        pm.paper_dataset,
        m.metric,
        m.size,
        m.split,
        m.system,
        m.method,
        m.mean as value,
        m.n,
        m.n_unanswered,
        m.ci_low,
        m.ci_high,
        m.is_primary,
        pm.metric is not null as is_paper_metric,
        m.query_limit
    from {{ metrics }} as m
    left join paper_metric as pm using (task, dataset, metric)
    left join origins as o using (task, dataset)
    where m.rule = 'loft'
        and m.grain = 'turn'
        and m.variant = 'default'
        and m.run_status = 'scored'
        and m.source <> 'planted'
        and (m.is_primary or pm.metric is not null)
),

from_paper as (
    select
        'paper' as source,
        'paper' as rank_group,
        'LOFT paper Table 2: 128k release corpus, test split' as corpus_origin,
        paper.task,
        paper.dataset,
        paper.paper_dataset,
        paper.metric,
        '128k' as size,
        'test' as split,
        paper.system,
        null::varchar as method,
        paper.value,
        null::bigint as n,
        null::bigint as n_unanswered,
        null::double as ci_low,
        null::double as ci_high,
        coalesce(paper.metric = {{ scoring_primary_metric('datasets.task', 'datasets.dataset', 'datasets.max_gold') }}, false)
            as is_primary,
        true as is_paper_metric,
        null::bigint as query_limit
    from paper
    left join {{ datasets }} as datasets using (task, dataset)
),

combined as (
    select * from warehouse
    union all by name
    select * from from_paper
)

select
    task,
    dataset,
    paper_dataset,
    metric,
    size,
    split,
    source,
    rank_group,
    corpus_origin,
    system,
    method,
    value,
    rank() over (partition by rank_group, task, dataset, metric, size, split order by value desc) as rank,
    n,
    n_unanswered,
    ci_low,
    ci_high,
    is_primary,
    is_paper_metric,
    query_limit
from combined
{% endmacro %}


{#
  leaderboard_wide: the leaderboard shaped like the paper's Table 2, one row per dataset and
  paper metric of the test split, one column per system ("paper: <model>" for the paper's,
  "<system>" for this warehouse's runs, "import: <system>" for imported files; a method other
  than cic is named in brackets, a quick try says so: "bm25 [quick try: 3 queries]").
#}
{% macro scoring_leaderboard_wide(leaderboard=none) %}
{%- set leaderboard = leaderboard or loft_ref('leaderboard') -%}
with

leaderboard as (
    select * from {{ leaderboard }}
),

cells as (
    select
        task,
        dataset,
        paper_dataset,
        metric,
        case source when 'paper' then 'paper: ' when 'import' then 'import: ' else '' end
            || system
            || case when method is not null and method <> 'cic' then ' (' || method || ')' else '' end
            || case when query_limit is not null then ' [quick try: ' || query_limit || ' queries]' else '' end
            as column_name,
        value
    from leaderboard
    where is_paper_metric and split = 'test'
),

final as (
    pivot cells on column_name using first(value) group by task, dataset, paper_dataset, metric
)

select * from final order by task, dataset
{% endmacro %}


{#
  paired_comparisons: every two runs ("arms": source, system, method, variant) scored on one
  dataset, split and primary metric (loft rule, per turn), compared query by query. The
  difference is mean(b) - mean(a) over the same query turns, with a seeded paired bootstrap
  95% interval (the per-query differences resampled together) and, when both arms score 0/1,
  McNemar's exact two-sided p-value over the discordant queries. Arms scored on different
  query turns are listed with is_same_queries false and no difference: they are not compared.
  Arms with no answered row (not run) are left out.
#}
{% macro scoring_paired_comparisons(scores=none, seed=none) %}
{%- set scores = scores or loft_ref('scores') -%}
{%- set seed = seed if seed is not none else var('seed', 20240612) -%}
{%- set arm = ['source', 'system', 'method', 'variant'] -%}
{%- set scope = ['size', 'task', 'dataset', 'split', 'metric_name'] -%}
with

primary_scores as (
    select {{ (scope + arm) | join(', ') }}, qid, turn, value, is_answered
    from {{ scores }}
    where is_primary and rule = 'loft' and grain = 'turn'
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
    case when is_same_queries then loft_bootstrap_interval(differences, {{ seed }}).low end as difference_ci_low,
    case when is_same_queries then loft_bootstrap_interval(differences, {{ seed }}).high end as difference_ci_high,
    case when is_same_queries and is_binary then n_only_a end as n_only_a,
    case when is_same_queries and is_binary then n_only_b end as n_only_b,
    case when is_same_queries and is_binary then loft_mcnemar_exact(n_only_a, n_only_b) end as mcnemar_p,
    case
        when not is_same_queries then 'not compared: the arms were scored on different query turns ('
            || n_a || ' and ' || n_b || ', ' || n_common || ' in common)'
    end as note
from final
{% endmacro %}


{#
  cost_ledger: per system, dataset and method, what the estimate said before any call (streamed
  and through the batch API, without and with caching) and what the responses cost: tokens
  (cached, written to a cache, neither), cost per correct answer (primary metric, loft rule,
  summed over the runs' dev and test turns), what prefix caching saved at the system's prices
  (cache reads below the input price, less cache writes above it; at the batch ratio for batch
  results), how many rows a batch answered or still holds, and median / p95 latency.
#}
{% macro scoring_cost_ledger(estimates=none, responses=none, scores=none) %}
{%- set estimates = estimates or loft_ref('cost_estimates') -%}
{%- set responses = responses or loft_ref('responses') -%}
{%- set scores = scores or loft_ref('scores') -%}
with

estimated as (
    select
        system,
        task,
        dataset,
        method,
        sum(n_requests) as n_requests_estimated,
        sum(cost_usd_no_cache) as estimated_usd_no_cache,
        sum(cost_usd_with_cache) as estimated_usd_with_cache,
        sum(cost_usd_batch) as estimated_usd_batch,
        sum(cost_usd_batch_with_cache) as estimated_usd_batch_with_cache
    from {{ estimates }}
    group by all
),

prices as (
    select
        system,
        max(input_usd_per_mtok) as input_usd_per_mtok,
        max(cached_input_usd_per_mtok) as cached_input_usd_per_mtok,
        max(cache_write_usd_per_mtok) as cache_write_usd_per_mtok,
        max(batch_price_ratio) as batch_price_ratio
    from {{ estimates }}
    where executor = system
    group by all
),

spent as (
    select
        responses.system,
        responses.task,
        responses.dataset,
        responses.method,
        count(*) as n_responses,
        count(*) filter (where responses.status = 'ok') as n_ok,
        count(*) filter (where responses.batch_id is not null and responses.status <> 'batch_pending') as n_batch,
        count(*) filter (where responses.status = 'batch_pending') as n_pending,
        coalesce(sum(responses.input_tokens), 0) as input_tokens,
        coalesce(sum(responses.cached_tokens), 0) as cached_tokens,
        coalesce(sum(responses.cache_write_tokens), 0) as cache_write_tokens,
        coalesce(sum(responses.input_tokens), 0) - coalesce(sum(responses.cached_tokens), 0)
            - coalesce(sum(responses.cache_write_tokens), 0) as uncached_input_tokens,
        coalesce(sum(responses.output_tokens), 0) as output_tokens,
        sum(responses.cost_usd) as actual_usd,
        sum(
            (coalesce(responses.cached_tokens, 0) * (prices.input_usd_per_mtok - prices.cached_input_usd_per_mtok)
             - coalesce(responses.cache_write_tokens, 0) * (prices.cache_write_usd_per_mtok - prices.input_usd_per_mtok))
            / 1e6 * case when responses.batch_id is not null then prices.batch_price_ratio else 1 end
        ) as caching_saved_usd,
        median(responses.latency_s) filter (where responses.status = 'ok' and responses.batch_id is null)
            as latency_p50_s,
        quantile_cont(responses.latency_s, 0.95) filter (where responses.status = 'ok' and responses.batch_id is null)
            as latency_p95_s
    from {{ responses }} as responses
    left join prices using (system)
    group by all
),

correct as (
    select system, task, dataset, method, sum(value) as n_correct
    from {{ scores }}
    where source = 'inference' and is_primary and rule = 'loft' and grain = 'turn'
    group by all
),

final as (
    select
        system,
        task,
        dataset,
        method,
        estimated.n_requests_estimated,
        estimated.estimated_usd_no_cache,
        estimated.estimated_usd_with_cache,
        estimated.estimated_usd_batch,
        estimated.estimated_usd_batch_with_cache,
        spent.n_responses,
        spent.n_ok,
        spent.n_batch,
        spent.n_pending,
        spent.input_tokens,
        spent.cached_tokens,
        spent.cache_write_tokens,
        spent.uncached_input_tokens,
        spent.output_tokens,
        spent.actual_usd,
        correct.n_correct,
        spent.actual_usd / nullif(correct.n_correct, 0) as usd_per_correct,
        spent.caching_saved_usd,
        spent.latency_p50_s,
        spent.latency_p95_s
    from estimated
    full outer join spent using (system, task, dataset, method)
    left join correct using (system, task, dataset, method)
)

select * from final order by system, task, dataset, method
{% endmacro %}
