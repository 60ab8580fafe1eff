{#
  The papers' tables as marts: each lays this warehouse's runs out as the paper lays its table
  out, with the paper's printed value beside every cell it prints.
#}

{#
  A paper cell's statistics from the metrics row `alias` that filled it (null when none did):
  run_status (missing when no row), n and n_unanswered (0 when no row), mean and interval.
#}
{% macro scoring_cell_statistics(alias) -%}
    coalesce({{ alias }}.run_status, 'missing') as run_status,
        coalesce({{ alias }}.n, 0) as n,
        coalesce({{ alias }}.n_unanswered, 0) as n_unanswered,
        {{ alias }}.mean,
        {{ alias }}.ci_low,
        {{ alias }}.ci_high,
        {{ alias }}.ci_method
{%- endmacro %}


{#
  A paper cell's statistics from a scoring_means row `alias` of the cell's turns (null when the
  cell has none): n and n_unanswered (0 when none), and the mean and interval only when some
  turn was answered.
#}
{% macro scoring_answered_statistics(alias) -%}
    coalesce({{ alias }}.n, 0) as n,
        coalesce({{ alias }}.n_unanswered, 0) as n_unanswered,
        case when {{ alias }}.n_unanswered < {{ alias }}.n then {{ alias }}.mean::double end as mean,
        case when {{ alias }}.n_unanswered < {{ alias }}.n then {{ alias }}.ci_low end as ci_low,
        case when {{ alias }}.n_unanswered < {{ alias }}.n then {{ alias }}.ci_high end as ci_high,
        case when {{ alias }}.n_unanswered < {{ alias }}.n then {{ alias }}.ci_method end as ci_method
{%- endmacro %}


{#
  Every cell of the `paper` CTE once per row of the `runs` CTE (its `keys` beside it), or, with
  no run at all, once alone (the run keys null; `size` set when the paper has none).
#}
{% macro scoring_cells_per_run(keys, size=none) -%}
    select {% for key in keys %}runs.{{ key }}, {% endfor %}paper.*
    from paper
    cross join runs
    union all by name
    select {% if size %}'{{ size }}' as size, {% endif %}paper.*
    from paper
    where not exists (select 1 from runs)
{%- endmacro %}


{#
  Why a cell of `task`/`dataset` (SQL expressions) has no row: the dataset is not in the build.
#}
{% macro scoring_not_in_build(task, dataset) -%}
    'not built: ' || {{ task }} || '/' || {{ dataset }}
        || ' is not in this build (not in the data dir at this size, or not selected by datasets)'
{%- endmacro %}


{#
  ablations: LOFT Table 4 (seed 000, §5; Gemini 1.5 Pro, 128k, test). One row per paper cell
  (dataset row x ablation column, from seeds/paper_table4.csv) and warehouse run (size, source,
  system, method; the variant is the column): the run's mean of the paper's metric (loft rule,
  per turn) with n and 95% interval from metrics, its difference from the same run's best prompt
  (variant default) over the same test queries with the paired bootstrap interval from
  paired_comparisons, and the paper's value and difference beside it. A run is one with an
  answered (or pending) cell; every paper cell has a row for it even when nothing filled it
  (n = 0, or no mean) with the reason; with no run at all the paper's cells stand alone
  (system null).
#}
{% macro scoring_ablations(metrics=none, comparisons=none, paper=none, datasets=none, size=none) %}
{%- set metrics = metrics or loft_ref('metrics') -%}
{%- set comparisons = comparisons or loft_ref('paired_comparisons') -%}
{%- set paper = paper or loft_ref('paper_table4') -%}
{%- set datasets = datasets or loft_ref('stg_datasets') -%}
{%- set size = size or (loft_size() | trim) -%}
with

paper as (
    select
        task::varchar as task,
        dataset::varchar as dataset,
        paper_dataset::varchar as paper_dataset,
        row_order::bigint as row_order,
        ablation::varchar as ablation,
        paper_column::varchar as paper_column,
        column_order::bigint as column_order,
        model::varchar as paper_model,
        metric::varchar as metric,
        value::double as paper_value,
        source::varchar as paper_source
    from {{ paper }}
),

built as (
    select distinct task, dataset from {{ datasets }}
),

test_metrics as (
    select metrics.* rename (variant as ablation)
    from {{ metrics }} as metrics
    inner join paper
        on metrics.task = paper.task
        and metrics.dataset = paper.dataset
        and metrics.variant = paper.ablation
        and metrics.metric_name = paper.metric || '_loft'
    where metrics.split = 'test' and metrics.grain = 'turn'
),

runs as (
    select distinct size, source, system, method from test_metrics where run_status in ('scored', 'pending')
),

run_cells as (
    {{ scoring_cells_per_run(['size', 'source', 'system', 'method'], size) }}
),

differences as (
    select
        size,
        source_a as source,
        system_a as system,
        method_a as method,
        task,
        dataset,
        metric_name,
        case when variant_a = 'default' then variant_b else variant_a end as ablation,
        n_common as n_paired,
        case when variant_a = 'default' then difference else -difference end as difference,
        case when variant_a = 'default' then difference_ci_low else -difference_ci_high end as difference_ci_low,
        case when variant_a = 'default' then difference_ci_high else -difference_ci_low end as difference_ci_high
    from {{ comparisons }}
    where split = 'test'
        and source_a = source_b and system_a = system_b and method_a = method_b
        and 'default' in (variant_a, variant_b) and variant_a <> variant_b
),

paper_differences as (
    select differences.* exclude (metric_name)
    from differences
    semi join paper
        on paper.task = differences.task
        and paper.dataset = differences.dataset
        and paper.ablation = differences.ablation
        and paper.metric || '_loft' = differences.metric_name
),

paper_best as (
    select task, dataset, paper_value as paper_best_value from paper where ablation = 'default'
),

final as (
    select
        run_cells.size,
        run_cells.task,
        run_cells.dataset,
        run_cells.paper_dataset,
        run_cells.row_order,
        run_cells.ablation,
        run_cells.paper_column,
        run_cells.column_order,
        run_cells.metric,
        run_cells.source,
        run_cells.system,
        run_cells.method,
        {{ scoring_cell_statistics('cell') }},
        differences.n_paired,
        differences.difference as difference_from_best,
        differences.difference_ci_low,
        differences.difference_ci_high,
        run_cells.paper_model,
        run_cells.paper_value,
        run_cells.paper_value - paper_best.paper_best_value as paper_difference_from_best,
        run_cells.paper_source,
        case
            when cell.run_status = 'scored' then null
            when run_cells.paper_value is null and run_cells.ablation = 'title_only'
                then 'not applicable: the dataset has no titles (the paper prints -)'
            when built.dataset is null
                then {{ scoring_not_in_build('run_cells.task', 'run_cells.dataset') }}
            when run_cells.system is null then 'no run at this size'
            when cell.run_status = 'pending' then 'pending: rows still in a provider batch'
            when cell.run_status = 'not_run' then 'not run: no answered row'
            else 'not built: prompt variant ' || run_cells.ablation || ' was not in prompt_variants'
        end as reason,
        cell.query_limit
    from run_cells
    left join test_metrics as cell using (size, source, system, method, task, dataset, ablation)
    left join paper_differences as differences using (size, source, system, method, task, dataset, ablation)
    left join paper_best
        on paper_best.task = run_cells.task and paper_best.dataset = run_cells.dataset
    left join built
        on built.task = run_cells.task and built.dataset = run_cells.dataset
)

select * from final
{% endmacro %}


{#
  sql_operator_accuracy: LOFT Figure 6 (seed 000, §4.5). SQL execution accuracy (per turn, loft
  and strict rules) binned by the operators of each turn's gold SQL, read from its sqlglot tree
  (loft_sql_operators, python/loft_warehouse/sql/operators.py): a turn counts in every bin it
  uses (min and max share a bin, as >, <, >= and <= do), `no_operator` when it uses none, and
  `all` holds every turn so a bin reads against the whole. n, mean and 95% interval as in
  metrics; bins with no answered row are left out. The figure prints no numbers, so there is
  no paper value to set beside.
#}
{% macro scoring_sql_operator_accuracy(scores=none, queries=none, seed=none) %}
{%- set scores = scores or loft_ref('scores') -%}
{%- set queries = queries or loft_ref('queries') -%}
{%- set seed = seed if seed is not none else var('seed', 20240612) -%}
{%- set keys = ['size', 'source', 'system', 'method', 'task', 'dataset', 'variant', 'split', 'metric', 'rule',
                'metric_name', 'operator'] -%}
with

sql_scores as (
    select * from {{ scores }}
    where task = 'sql' and metric = 'exec_acc' and grain = 'turn'
),

sql_queries as (
    select task, dataset, split, qid, turn, gold_sql from {{ queries }} where task = 'sql'
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
{% endmacro %}


{#
  scaling_scores: LOFT Figure 5's rows, query by query. Every primary score (loft rule, per
  turn) of every built size, one row per run (source, system, method, variant), query turn and
  size, so the same query can be followed from 32k to 128k to 1M (the corpora nest). sized is a
  list of (size, scores relation) for the sizes built; n_sizes counts the sizes at which the
  run scored the query turn.
#}
{% macro scoring_scaling_scores(sized) %}
{%- set order = {'32k': 1, '128k': 2, '1m': 3} -%}
with

sized_scores as (
    {% for size, relation in sized %}
    select
        size,
        {{ order[size] }}::bigint as size_order,
        source, system, method, variant, task, dataset, split, qid, turn, metric_name, value, is_answered
    from {{ relation }}
    where is_primary and grain = 'turn' and rule = 'loft'
    {{ 'union all' if not loop.last }}
    {% endfor %}
    {% if not sized %}
    select
        null::varchar as size, null::bigint as size_order, null::varchar as source, null::varchar as system,
        null::varchar as method, null::varchar as variant, null::varchar as task, null::varchar as dataset,
        null::varchar as split, null::varchar as qid, null::bigint as turn, null::varchar as metric_name,
        null::double as value, null::boolean as is_answered
    where false
    {% endif %}
),

final as (
    select
        *,
        count(*) over (
            partition by source, system, method, variant, task, dataset, split, metric_name, qid, turn
        ) as n_sizes
    from sized_scores
)

select * from final
{% endmacro %}


{#
  scaling_curves: LOFT Figure 5 per dataset. One row per run (source, system, method, variant),
  dataset, split and size: n, mean and 95% interval of the primary metric (as in metrics), and
  the change from the run's next smaller built size over the query turns both sizes scored,
  with a seeded paired bootstrap interval (the per-query differences resampled together). Runs
  with no answered row at a size are left out at that size.
#}
{% macro scoring_scaling_curves(scaling_scores, seed=none) %}
{%- set seed = seed if seed is not none else var('seed', 20240612) -%}
{%- set run = ['source', 'system', 'method', 'variant', 'task', 'dataset', 'split', 'metric_name'] -%}
with

answered as (
    select *
    from {{ scaling_scores }}
    qualify bool_or(is_answered) over (partition by {{ run | join(', ') }}, size)
),

means as (
    {{ scoring_means('answered', run + ['size', 'size_order'],
                     ['coalesce(stddev_samp(value), 0) / sqrt(count(*)) as standard_error'], seed) }}
),

previous as (
    select
        {{ run | join(', ') }},
        size,
        lag(size) over (partition by {{ run | join(', ') }} order by size_order) as previous_size
    from means
),

differences as (
    select
        {% for key in run %}previous.{{ key }}, {% endfor %}
        previous.size,
        count(*) as n_common,
        {{ scoring_order_free_mean('larger.value - smaller.value') }} as difference,
        loft_bootstrap_interval(list(larger.value - smaller.value order by larger.qid, larger.turn), {{ seed }}) as interval,
        coalesce(stddev_samp(larger.value - smaller.value), 0) / sqrt(count(*)) as standard_error
    from previous
    inner join answered as larger
        on {% for key in run %}larger.{{ key }} = previous.{{ key }} and {% endfor %}larger.size = previous.size
    inner join answered as smaller
        on {% for key in run %}smaller.{{ key }} = previous.{{ key }} and {% endfor %}smaller.size = previous.previous_size
        and smaller.qid = larger.qid and smaller.turn = larger.turn
    group by all
),

final as (
    select
        {% for key in run %}means.{{ key }}, {% endfor %}
        means.size,
        means.size_order,
        means.n,
        means.mean::double as mean,
        means.ci_low,
        means.ci_high,
        means.ci_method,
        means.standard_error::double as standard_error,
        previous.previous_size,
        differences.n_common as n_common_with_previous,
        differences.difference::double as difference_from_previous,
        differences.interval.low as difference_ci_low,
        differences.interval.high as difference_ci_high,
        differences.standard_error::double as difference_standard_error
    from means
    inner join previous
        on {% for key in run %}previous.{{ key }} = means.{{ key }} and {% endfor %}previous.size = means.size
    left join differences
        on {% for key in run %}differences.{{ key }} = means.{{ key }} and {% endfor %}differences.size = means.size
)

select * from final
{% endmacro %}


{#
  scaling_task_curves: LOFT Figure 5 as the paper plots it, "averaged over all constituent
  datasets in each task": one row per run (source, system, method, variant), task, split and
  size from scaling_curves, the mean of its datasets' means (each dataset weighs the same) with
  a normal 95% interval from the datasets' standard errors (independent samples: the variance of
  an average of D means is the sum of their variances over D squared), and the average of the
  datasets' paired differences from the task's next smaller size over the datasets scored at
  both, with its interval alike. datasets says which were averaged.
#}
{% macro scoring_scaling_task_curves(curves) %}
{%- set run = ['source', 'system', 'method', 'variant', 'task', 'split'] -%}
with

curves as (select * from {{ curves }}),

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
        sqrt(sum(curves.difference_standard_error * curves.difference_standard_error)) / count(*) as standard_error
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
        (differences.difference - 1.959963984540054 * differences.standard_error)::double as difference_ci_low,
        (differences.difference + 1.959963984540054 * differences.standard_error)::double as difference_ci_high
    from ordered
    left join differences
        on {% for key in run %}differences.{{ key }} = ordered.{{ key }} and {% endfor %}differences.size = ordered.size
)

select * from final
{% endmacro %}


{#
  scaling_sizes: which sizes the cross-size tables read. One row per benchmark size: whether its
  schema holds a built scores table, how many answered primary turns and runs it holds, and
  how to build it when it is missing.
#}
{% macro scoring_scaling_sizes(sized) %}
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
    from {{ relation }}
    where is_primary and grain = 'turn' and rule = 'loft'
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
{% endmacro %}


{#
  example_curves: LOFT Figures 7 and 8, accuracy as the prompt holds more examples. One row
  per run (source, system, method), dataset, split and point, from metrics (the primary metric,
  loft rule, per turn): experiment loft_few_shot takes the few_shot_{k} variants (Figure 8, x =
  k few-shot examples), icl_context the many-shot context_{c} variants (Figure 7, x = the
  context's tokens, with how many of the dataset's examples that context holds and their share
  of all, the paper's "% of examples used"). n, mean and the interval are metrics'. A run is
  one with an answered (or pending) point; its points with no answered row keep their rows
  (run_status not_run, no mean). The figures print no numbers, so there is no paper value to
  set beside.
#}
{% macro scoring_example_curves(metrics=none, corpus=none) %}
{%- set metrics = metrics or loft_ref('metrics') -%}
{%- set corpus = corpus or loft_ref('corpus') -%}
with

points as (
    select
        *,
        case when variant like 'few_shot_%' then 'loft_few_shot' else 'icl_context' end as experiment,
        case
            when variant like 'few_shot_%' then regexp_extract(variant, '^few_shot_([0-9]+)$', 1)::bigint
            else regexp_extract(variant, '^context_([0-9]+)k$', 1)::bigint * 1000
        end as x
    from {{ metrics }}
    where is_primary and rule = 'loft' and grain = 'turn'
        and (regexp_full_match(variant, 'few_shot_[0-9]+') or regexp_full_match(variant, 'context_[0-9]+k'))
    qualify bool_or(run_status <> 'not_run') over (partition by size, source, system, method)
),

example_contexts as (
    select
        task,
        dataset,
        try_cast(replace(replace(min_context, 'k', '000'), 'm', '000000') as bigint) as context_tokens
    from {{ corpus }}
    where task = 'icl'
),

final as (
    select
        points.size,
        points.source,
        points.system,
        points.method,
        points.task,
        points.dataset,
        points.split,
        points.metric_name,
        points.experiment,
        points.variant,
        points.x,
        case when points.experiment = 'loft_few_shot' then 'few_shot_examples' else 'context_tokens' end as x_unit,
        case
            when points.experiment = 'loft_few_shot' then points.x
            else (
                select count(*) from example_contexts as e
                where e.task = points.task and e.dataset = points.dataset and e.context_tokens <= points.x
            )
        end as n_examples,
        case
            when points.experiment = 'icl_context' then (
                select count(*) filter (where e.context_tokens <= points.x) / nullif(count(*), 0)
                from example_contexts as e
                where e.task = points.task and e.dataset = points.dataset
            )
        end as examples_share,
        points.run_status,
        points.n,
        points.n_unanswered,
        points.mean,
        points.ci_low,
        points.ci_high,
        points.ci_method,
        points.query_limit
    from points
)

select * from final
{% endmacro %}


{#
  Every QUEST-LOFT paper cell (the `paper` CTE) once per run of its method under its question
  set's gold version (the `runs` CTE: size, source, system, method, variant, top_k,
  method_pattern, question_set), or once alone with the run columns null.
#}
{% macro scoring_quest_loft_run_cells(size) -%}
    select runs.size, runs.source, runs.system, runs.method, runs.variant, runs.top_k, paper.*
    from paper
    inner join runs on runs.method_pattern = paper.method_pattern and runs.question_set = paper.question_set
    union all by name
    select
        '{{ size }}' as size, null::varchar as source, null::varchar as system, null::varchar as method,
        null::varchar as variant, null::bigint as top_k, paper.*
    from paper
    anti join runs on runs.method_pattern = paper.method_pattern and runs.question_set = paper.question_set
{%- endmacro %}


{# A QUEST-LOFT mart's leading columns: the paper cell, then the run that fills it. #}
{% macro scoring_quest_loft_cell_columns() -%}
    run_cells.paper_table,
        run_cells.paper_model,
        run_cells.question_set,
        run_cells.row_order,
        run_cells.paper_method,
        run_cells.method_pattern,
        run_cells.column_order,
        run_cells.paper_column,
        run_cells.metric,
        run_cells.size,
        run_cells.source,
        run_cells.system,
        run_cells.method,
        run_cells.variant,
        run_cells.top_k
{%- endmacro %}


{#
  quest_loft_methods: QUEST-LOFT Tables 3-5 (seed 002 §4-5): one row per paper cell (table,
  method row, metric column; the seed's tables 3-5) and warehouse run of that method on
  rag/quest (test split, rule revised: DEBATABLE answers removed from both sides), under the
  question set's gold version (revised: quest_loft_revised, Appendix E; simple28:
  quest_loft_simple28, Appendix F, whose text holds 23 of the 28 questions): the run's mean
  with n and 95% interval from metrics, the paper's value beside. The paper's RAG methods
  match rag_top{k} of any k (top_k says which; the paper used 40). Cells nothing filled keep
  their row and say why: QUEST not in the data dir, or no run.
#}
{% macro scoring_quest_loft_methods(metrics=none, paper=none, datasets=none, size=none) %}
{%- set metrics = metrics or loft_ref('metrics') -%}
{%- set paper = paper or loft_ref('paper_quest_loft') -%}
{%- set datasets = datasets or loft_ref('stg_datasets') -%}
{%- set size = size or (loft_size() | trim) -%}
with

paper as (
    select
        paper_table::bigint as paper_table,
        model::varchar as paper_model,
        question_set::varchar as question_set,
        row_order::bigint as row_order,
        paper_method::varchar as paper_method,
        method_pattern::varchar as method_pattern,
        column_order::bigint as column_order,
        paper_column::varchar as paper_column,
        metric::varchar as metric,
        value::double as paper_value,
        source::varchar as paper_source
    from {{ paper }}
    where paper_table in (3, 4, 5)
),

quest_metrics as (
    select
        *,
        case gold_version when 'quest_loft_revised' then 'revised' when 'quest_loft_simple28' then 'simple28' end
            as question_set,
        regexp_replace(method, '^rag_top[0-9]+', 'rag_top{k}') as method_pattern,
        try_cast(nullif(regexp_extract(method, '^rag_top([0-9]+)', 1), '') as bigint) as top_k
    from {{ metrics }}
    where task = 'rag' and dataset = 'quest' and split = 'test' and rule = 'revised' and grain = 'turn'
),

runs as (
    select distinct size, source, system, method, variant, method_pattern, top_k, question_set
    from quest_metrics
    where run_status in ('scored', 'pending') and question_set is not null
),

run_cells as ({{ scoring_quest_loft_run_cells(size) }}),

built as (
    select distinct task, dataset from {{ datasets }} where task = 'rag' and dataset = 'quest'
),

final as (
    select
        {{ scoring_quest_loft_cell_columns() }},
        {{ scoring_cell_statistics('cell') }},
        run_cells.paper_value,
        run_cells.paper_source,
        case
            when cell.run_status = 'scored' then null
            when (select count(*) from built) = 0 then {{ scoring_not_in_build("'rag'", "'quest'") }}
            when run_cells.system is null
                then 'no run of this method scored under gold version quest_loft_' || run_cells.question_set
                    || ' at this size'
            when cell.run_status = 'pending' then 'pending: rows still in a provider batch'
            when cell.run_status = 'not_run' then 'not run: no answered row'
            else 'no ' || run_cells.metric || ' rows under rule revised for this run'
        end as reason,
        cell.query_limit
    from run_cells
    left join quest_metrics as cell
        on cell.size = run_cells.size
        and cell.source = run_cells.source
        and cell.system = run_cells.system
        and cell.method = run_cells.method
        and cell.variant = run_cells.variant
        and cell.metric = run_cells.metric
        and cell.question_set = run_cells.question_set
)

select * from final
{% endmacro %}


{#
  rr_methods: R&R Table 1 (seed 001 §5): fuzzy match of each R&R method (Base = cic, Rep =
  reprompt, ICR = icr, R&R = r_and_r) per dataset and document length d, averaged over the
  answer positions x, one row per paper cell (dataset row x d, method column;
  seeds/paper_rr_table1.csv), run (size, source, system) and arm of that method (run_method:
  reprompt_r5000 and reprompt_r20000 are two arms of Rep, each with its reminder interval and
  page count from arms), on the test split, with n and the 95% interval, and both paper models'
  values beside (GPT-4 Turbo, Claude-2.1; the paper used r = 10k). Cells nothing filled keep
  their row and say why.
#}
{#
  The R&R marts' cell joins: each paper cell of a run (run_cells) to the run's cell of that
  method family, dataset and d (cells; `extra` adds conditions), and to whether the dataset is
  in the build (built).
#}
{% macro scoring_rr_cell_joins(extra='') -%}
    from run_cells
    left join cells as cell
        on cell.size = run_cells.size
        and cell.source = run_cells.source
        and cell.system = run_cells.system
        and cell.method_family = run_cells.method
        and cell.task = run_cells.task
        and cell.dataset = run_cells.dataset
        and cell.document_tokens = run_cells.document_tokens
        {{ extra }}
    left join built
        on built.task = run_cells.task and built.dataset = run_cells.dataset
{%- endmacro %}


{#
  Why an R&R mart's cell has no mean (null when it has one); `not_built` is the SQL text said
  when the build holds no such arm.
#}
{% macro scoring_rr_reason(not_built=none) -%}
    case
            when cell.n_unanswered < cell.n then null
            when built.dataset is null
                then {{ scoring_not_in_build('run_cells.task', 'run_cells.dataset') }}
            when run_cells.system is null then 'no run at this size'
            when cell.n is not null then 'not run: no answered row'
            else {{ not_built or "'not built: method ' || run_cells.method || ' or d = ' || run_cells.document_tokens
                || ' was not in this build (methods, rr_lengths; d must fit the size)'" }}
        end
{%- endmacro %}


{#
  R&R cells: the primary fuzzy match (loft rule, per turn) of every rr run on the test split,
  per (size, source, system, method, dataset, document length d of the variant's rr_d{d}
  experiment), averaged over the answer positions x, with n, n_unanswered and the 95% interval,
  and the method's family (its name less the _r/_k/_c settings) and settings from arms.
#}
{% macro scoring_rr_cells(scores, variants, arms, seed) %}
{%- set keys = ['size', 'source', 'system', 'method', 'task', 'dataset', 'document_tokens'] -%}
with

rr_scores as (
    select
        scores.*,
        try_cast(regexp_extract(variants.experiment, '^rr_d([0-9]+)$', 1) as bigint) as document_tokens
    from {{ scores }} as scores
    inner join {{ variants }} as variants using (task, dataset, variant)
    where scores.task = 'rr' and scores.split = 'test' and scores.is_primary and scores.rule = 'loft'
        and scores.grain = 'turn' and regexp_full_match(variants.experiment, 'rr_d[0-9]+')
),

means as (
    {{ scoring_means('rr_scores', keys, ['count(*) filter (where not is_answered) as n_unanswered'], seed) }}
),

method_settings as (
    select
        task,
        dataset,
        method,
        any_value(reprompt_every) as reprompt_every,
        any_value(icr_pages) as icr_pages,
        any_value(chunk_tokens) as chunk_tokens
    from {{ arms }}
    group by all
),

with_settings as (
    select
        means.*,
        regexp_replace(means.method, '(_[rkc][1-9][0-9]*)+$', '') as method_family,
        method_settings.reprompt_every,
        method_settings.icr_pages,
        method_settings.chunk_tokens
    from means
    left join method_settings using (task, dataset, method)
)

select * from with_settings
{% endmacro %}


{% macro scoring_rr_methods(scores=none, variants=none, arms=none, paper=none, datasets=none, seed=none, size=none) %}
{%- set scores = scores or loft_ref('scores') -%}
{%- set variants = variants or loft_ref('prompt_variants') -%}
{%- set arms = arms or loft_ref('arms') -%}
{%- set paper = paper or loft_ref('paper_rr_table1') -%}
{%- set datasets = datasets or loft_ref('stg_datasets') -%}
{%- set seed = seed if seed is not none else var('seed', 20240612) -%}
{%- set size = size or (loft_size() | trim) -%}
with

paper as (
    select
        task::varchar as task,
        dataset::varchar as dataset,
        any_value(paper_dataset)::varchar as paper_dataset,
        any_value(row_order)::bigint as row_order,
        document_tokens::bigint as document_tokens,
        method::varchar as method,
        any_value(paper_column)::varchar as paper_column,
        any_value(column_order)::bigint as column_order,
        any_value(metric)::varchar as metric,
        any_value(value::double) filter (where model = 'GPT-4 Turbo') as paper_gpt4_turbo,
        any_value(value::double) filter (where model = 'Claude-2.1') as paper_claude21,
        string_agg(source, '; ' order by model desc) as paper_source
    from {{ paper }}
    group by task, dataset, document_tokens, method
),

cells as ({{ scoring_rr_cells(scores, variants, arms, seed) }}),

runs as (
    select distinct size, source, system from cells where n_unanswered < n
),

run_cells as (
    {{ scoring_cells_per_run(['size', 'source', 'system'], size) }}
),

built as (
    select distinct task, dataset from {{ datasets }}
),

final as (
    select
        run_cells.size,
        run_cells.task,
        run_cells.dataset,
        run_cells.paper_dataset,
        run_cells.row_order,
        run_cells.document_tokens,
        run_cells.method,
        run_cells.paper_column,
        run_cells.column_order,
        run_cells.metric,
        run_cells.source,
        run_cells.system,
        cell.method as run_method,
        cell.reprompt_every,
        cell.icr_pages,
        cell.chunk_tokens,
        {{ scoring_answered_statistics('cell') }},
        run_cells.paper_gpt4_turbo,
        run_cells.paper_claude21,
        run_cells.paper_source,
        {{ scoring_rr_reason() }} as reason
    {{ scoring_rr_cell_joins() }}
)

select * from final
{% endmacro %}


{#
  rr_sweeps: R&R Table 2 (chunkwise ICR and R&R by chunk size c, d = 80k, both models), Table 5
  (reprompting every r = 5k, 10k, 20k tokens, d = 40k, GPT-4 Turbo) and Table 6 (the reminder
  placements at r = 10k, and before each answer page with no interval) from seeds/paper_rr_sweeps.csv:
  one row per paper cell (table, dataset row, setting value, method column) and run (size,
  source, system), filled by the arm of that method family whose setting (chunk_tokens for
  Table 2, reprompt_every for Table 5) equals the cell's, e.g. chunked_icr_c20000 or
  reprompt_r5000; fuzzy match averaged over the answer positions x as in rr_methods, with n and
  the 95% interval, and both paper models' values beside. Cells nothing filled keep their row
  with the reason.
#}
{% macro scoring_rr_sweeps(scores=none, variants=none, arms=none, paper=none, datasets=none, seed=none, size=none) %}
{%- set scores = scores or loft_ref('scores') -%}
{%- set variants = variants or loft_ref('prompt_variants') -%}
{%- set arms = arms or loft_ref('arms') -%}
{%- set paper = paper or loft_ref('paper_rr_sweeps') -%}
{%- set datasets = datasets or loft_ref('stg_datasets') -%}
{%- set seed = seed if seed is not none else var('seed', 20240612) -%}
{%- set size = size or (loft_size() | trim) -%}
with

paper as (
    select
        paper_table::bigint as paper_table,
        task::varchar as task,
        dataset::varchar as dataset,
        any_value(paper_dataset)::varchar as paper_dataset,
        any_value(row_order)::bigint as row_order,
        document_tokens::bigint as document_tokens,
        setting::varchar as setting,
        setting_value::bigint as setting_value,
        method::varchar as method,
        any_value(paper_column)::varchar as paper_column,
        any_value(column_order)::bigint as column_order,
        any_value(metric)::varchar as metric,
        any_value(value::double) filter (where model = 'GPT-4 Turbo') as paper_gpt4_turbo,
        any_value(value::double) filter (where model = 'Claude-2.1') as paper_claude21,
        string_agg(source, '; ' order by model desc) as paper_source
    from {{ paper }}
    group by paper_table, task, dataset, document_tokens, setting, setting_value, method
),

cells as ({{ scoring_rr_cells(scores, variants, arms, seed) }}),

runs as (
    select distinct size, source, system from cells where n_unanswered < n
),

run_cells as (
    {{ scoring_cells_per_run(['size', 'source', 'system'], size) }}
),

built as (
    select distinct task, dataset from {{ datasets }}
),

final as (
    select
        run_cells.paper_table,
        run_cells.size,
        run_cells.task,
        run_cells.dataset,
        run_cells.paper_dataset,
        run_cells.row_order,
        run_cells.document_tokens,
        run_cells.setting,
        run_cells.setting_value,
        run_cells.method,
        run_cells.paper_column,
        run_cells.column_order,
        run_cells.metric,
        run_cells.source,
        run_cells.system,
        cell.method as run_method,
        {{ scoring_answered_statistics('cell') }},
        run_cells.paper_gpt4_turbo,
        run_cells.paper_claude21,
        run_cells.paper_source,
        {{ scoring_rr_reason(
            "'not built: no ' || run_cells.method || ' arm'
                || coalesce(' with ' || run_cells.setting || ' = ' || run_cells.setting_value, '')
                || ' at d = ' || run_cells.document_tokens || ' (methods, e.g. ' || run_cells.method
                || coalesce('_' || case run_cells.setting when 'chunk_tokens' then 'c' else 'r' end
                    || run_cells.setting_value, '')
                || '; rr_lengths; d must fit the size)'"
        ) }} as reason
    {{ scoring_rr_cell_joins(
        "and case run_cells.setting when 'chunk_tokens' then cell.chunk_tokens
            when 'reprompt_every' then cell.reprompt_every end is not distinct from run_cells.setting_value"
    ) }}
)

select * from final
{% endmacro %}


{#
  rr_positions: R&R Tables 7-9 (seed 001 App. B: Base, Rep and R&R with GPT-4 Turbo on NQ,
  SQuAD and PubMed by document length d and answer position x; seeds/paper_rr_positions.csv):
  one row per paper cell and run (size, source, system), filled from position_curves (the
  rr_d{d} experiment's point at x tokens, test split) by every arm of the method family
  (run_method), with n and the 95% interval, the paper's value beside. Averaged over x, the
  paper's rows are its Table 1 (rr_methods). Cells nothing filled keep their row with the reason.
#}
{% macro scoring_rr_positions(curves=none, paper=none, datasets=none, size=none) %}
{%- set curves = curves or loft_ref('position_curves') -%}
{%- set paper = paper or loft_ref('paper_rr_positions') -%}
{%- set datasets = datasets or loft_ref('stg_datasets') -%}
{%- set size = size or (loft_size() | trim) -%}
with

paper as (
    select
        paper_table::bigint as paper_table,
        task::varchar as task,
        dataset::varchar as dataset,
        paper_dataset::varchar as paper_dataset,
        document_tokens::bigint as document_tokens,
        answer_position::bigint as answer_position,
        method::varchar as method,
        paper_column::varchar as paper_column,
        metric::varchar as metric,
        value::double as paper_gpt4_turbo,
        source::varchar as paper_source
    from {{ paper }}
),

cells as (
    select
        *,
        try_cast(regexp_extract(experiment, '^rr_d([0-9]+)$', 1) as bigint) as document_tokens,
        position::bigint as answer_position,
        regexp_replace(method, '(_[rkc][1-9][0-9]*)+$', '') as method_family
    from {{ curves }}
    where task = 'rr' and split = 'test' and rule = 'loft' and regexp_full_match(experiment, 'rr_d[0-9]+')
),

runs as (
    select distinct size, source, system from cells where n_unanswered < n
),

run_cells as (
    {{ scoring_cells_per_run(['size', 'source', 'system'], size) }}
),

built as (
    select distinct task, dataset from {{ datasets }}
),

final as (
    select
        run_cells.paper_table,
        run_cells.size,
        run_cells.task,
        run_cells.dataset,
        run_cells.paper_dataset,
        run_cells.document_tokens,
        run_cells.answer_position,
        run_cells.method,
        run_cells.paper_column,
        run_cells.metric,
        run_cells.source,
        run_cells.system,
        cell.method as run_method,
        {{ scoring_answered_statistics('cell') }},
        run_cells.paper_gpt4_turbo,
        run_cells.paper_source,
        {{ scoring_rr_reason() }} as reason
    {{ scoring_rr_cell_joins('and cell.answer_position = run_cells.answer_position') }}
)

select * from final
{% endmacro %}


{#
  arm_metrics: metrics with the settings of each row's arm (arms) beside it, so one query pivots
  two sweeps of a method (reprompt_r5000 and reprompt_r20000, few_shot_0 .. few_shot_5) by their
  numbers. Imported runs (method cic) take the arm of the prompts they answer where the build
  has them; otherwise the arm columns are null.
#}
{% macro scoring_arm_metrics(metrics=none, arms=none) %}
{%- set metrics = metrics or loft_ref('metrics') -%}
{%- set arms = arms or loft_ref('arms') -%}
with

final as (
    select metrics.*, arms.* exclude (size, task, dataset, variant, method)
    from {{ metrics }} as metrics
    left join {{ arms }} as arms using (task, dataset, variant, method)
)

select * from final
{% endmacro %}


{#
  closed_book: LOFT Table 3 (seed 000 §4.4): RAG without the corpus (prompt variant
  closed_book) against the corpus-in-context prompt (default) of the same run on the same
  questions, on the paper's dev split at 32k and test split at 128k (seeds/paper_table3.csv).
  It reads scaling_scores, so both sizes must be built in the warehouse. One row per paper cell
  and run (source, system, method): the closed-book mean with n and 95% interval, the paired
  difference from the default prompt with its bootstrap interval, and the paper's value and
  difference beside. A cell nothing filled keeps its row and says why.
#}
{% macro scoring_closed_book(scaling_scores=none, sizes=none, paper=none, seed=none) %}
{%- set seed = seed if seed is not none else var('seed', 20240612) -%}
{%- set keys = ['source', 'system', 'method', 'task', 'dataset', 'size', 'split'] -%}
with

paper as (
    select
        task::varchar as task,
        dataset::varchar as dataset,
        paper_dataset::varchar as paper_dataset,
        row_order::bigint as row_order,
        size::varchar as size,
        split::varchar as split,
        paper_column::varchar as paper_column,
        column_order::bigint as column_order,
        model::varchar as paper_model,
        metric::varchar as metric,
        value::double as paper_value,
        difference_from_cic::double as paper_difference_from_cic,
        source::varchar as paper_source
    from {{ paper }}
),

closed as (
    select * from {{ scaling_scores }} where variant = 'closed_book'
),

closed_means as (
    {{ scoring_means('closed', keys, ['count(*) filter (where not is_answered) as n_unanswered'], seed) }}
),

differences as (
    select
        {% for key in keys %}closed.{{ key }}, {% endfor %}
        count(*) as n_paired,
        {{ scoring_order_free_mean('cic.value') }}::double as cic_mean,
        {{ scoring_order_free_mean('closed.value - cic.value') }}::double as difference,
        loft_bootstrap_interval(list(closed.value - cic.value order by closed.qid, closed.turn), {{ seed }}) as interval
    from closed
    inner join (select * from {{ scaling_scores }} where variant = 'default') as cic
        on {% for key in keys %}cic.{{ key }} = closed.{{ key }} and {% endfor %}cic.qid = closed.qid
        and cic.turn = closed.turn
    group by all
),

runs as (
    select distinct source, system, method from closed_means where n_unanswered < n
),

run_cells as (
    {{ scoring_cells_per_run(['source', 'system', 'method']) }}
),

final as (
    select
        run_cells.task,
        run_cells.dataset,
        run_cells.paper_dataset,
        run_cells.row_order,
        run_cells.size,
        run_cells.split,
        run_cells.paper_column,
        run_cells.column_order,
        run_cells.metric,
        run_cells.source,
        run_cells.system,
        run_cells.method,
        {{ scoring_answered_statistics('cell') }},
        differences.n_paired,
        differences.cic_mean,
        differences.difference as difference_from_cic,
        differences.interval.low as difference_ci_low,
        differences.interval.high as difference_ci_high,
        run_cells.paper_model,
        run_cells.paper_value,
        run_cells.paper_difference_from_cic,
        run_cells.paper_source,
        case
            when cell.n_unanswered < cell.n then null
            when not coalesce(built.is_built, false)
                then 'not built: loft_' || run_cells.size || ' is not in this warehouse (dbt build --select loft_'
                    || run_cells.size || ', then loft_compare)'
            when run_cells.system is null
                then 'no closed-book run: no system answered a closed_book prompt (a RAG variant, built when named in prompt_variants)'
            when cell.n is not null then 'not run: no answered row'
            else 'no closed-book rows of ' || run_cells.task || '/' || run_cells.dataset || ' ' || run_cells.split
                || ' at ' || run_cells.size || ' for this run'
        end as reason
    from run_cells
    left join closed_means as cell
        on cell.source = run_cells.source
        and cell.system = run_cells.system
        and cell.method = run_cells.method
        and cell.task = run_cells.task
        and cell.dataset = run_cells.dataset
        and cell.size = run_cells.size
        and cell.split = run_cells.split
    left join differences
        on differences.source = run_cells.source
        and differences.system = run_cells.system
        and differences.method = run_cells.method
        and differences.task = run_cells.task
        and differences.dataset = run_cells.dataset
        and differences.size = run_cells.size
        and differences.split = run_cells.split
    left join {{ sizes }} as built on built.size = run_cells.size
)

select * from final
{% endmacro %}


{#
  rr_costs: R&R Table 3 (seed 001: LLM calls m and mean input and output tokens per question of
  chunkwise ICR and chunkwise R&R by chunk size c at d = 80k, GPT-4 Turbo; seeds/paper_rr_costs.csv):
  one row per paper cell (c, method, measure) and run (size, source, system), filled by the arm
  of the method family with that chunk size over every R&R dataset's test questions at d = 80k.
  A question's calls are its responses that made a request, every stage counted (chunks, then
  the final QA call); its input tokens are what the provider reported for them, or, when any
  call reported none, the warehouse's own count of the prompts sent (n_tokens_total,
  SentencePiece; n_counted_by_warehouse says how many); its output tokens only as reported.
#}
{% macro scoring_rr_costs(responses=none, prompt_tokens=none, variants=none, arms=none, paper=none, datasets=none,
                          seed=none, size=none) %}
{%- set responses = responses or loft_ref('responses') -%}
{%- set variants = variants or loft_ref('prompt_variants') -%}
{%- set arms = arms or loft_ref('arms') -%}
{%- set paper = paper or loft_ref('paper_rr_costs') -%}
{%- set datasets = datasets or loft_ref('stg_datasets') -%}
{%- set seed = seed if seed is not none else var('seed', 20240612) -%}
{%- set size = size or (loft_size() | trim) -%}
{%- set keys = ['size', 'source', 'system', 'method', 'method_family', 'chunk_tokens', 'task', 'document_tokens',
                'measure'] -%}
with

paper as (
    select
        paper_table::bigint as paper_table,
        task::varchar as task,
        document_tokens::bigint as document_tokens,
        chunk_tokens::bigint as chunk_tokens,
        row_order::bigint as row_order,
        method::varchar as method,
        paper_column::varchar as paper_column,
        column_order::bigint as column_order,
        measure::varchar as measure,
        value::double as paper_gpt4_turbo,
        source::varchar as paper_source
    from {{ paper }}
),

sent_tokens as (
    {% if prompt_tokens %}
    select * from {{ prompt_tokens }}
    {% else %}
    select 1 as stage, null::varchar as system, prompt_id, n_tokens_total from {{ loft_ref('prompts') }}
    union all
    select 2 as stage, system, prompt_id, n_tokens_total from {{ loft_ref('int_stage2_prompts') }}
    union all
    select 3 as stage, system, prompt_id, n_tokens_total from {{ loft_ref('int_stage3_prompts') }}
    {% endif %}
),

calls as (
    select
        responses.source,
        responses.system,
        responses.method,
        responses.task,
        responses.dataset,
        responses.variant,
        responses.qid,
        responses.turn,
        responses.input_tokens,
        responses.output_tokens,
        sent_tokens.n_tokens_total
    from {{ responses }} as responses
    left join sent_tokens
        on sent_tokens.stage = responses.stage
        and sent_tokens.prompt_id = responses.prompt_id
        and (sent_tokens.system is null or sent_tokens.system = responses.system)
    where responses.task = 'rr' and responses.split = 'test' and responses.request_key is not null
),

questions as (
    select
        source,
        system,
        method,
        task,
        dataset,
        variant,
        qid,
        turn,
        count(*) as n_calls,
        case when count(input_tokens) = count(*) then sum(input_tokens) end as reported_input_tokens,
        sum(n_tokens_total) as counted_input_tokens,
        case when count(output_tokens) = count(*) then sum(output_tokens) end as reported_output_tokens
    from calls
    group by all
),

settings as (
    select
        questions.*,
        try_cast(regexp_extract(variants.experiment, '^rr_d([0-9]+)$', 1) as bigint) as document_tokens,
        arms.method_family,
        arms.chunk_tokens
    from questions
    inner join {{ variants }} as variants using (task, dataset, variant)
    inner join {{ arms }} as arms using (task, dataset, variant, method)
    where regexp_full_match(variants.experiment, 'rr_d[0-9]+')
),

measured as (
    select
        '{{ size }}' as size,
        * exclude (measures),
        measures.measure,
        measures.value::double as value,
        measures.by_warehouse
    from settings
    cross join unnest([
        {'measure': 'calls', 'value': n_calls, 'by_warehouse': false},
        {
            'measure': 'input_tokens',
            'value': coalesce(reported_input_tokens, counted_input_tokens),
            'by_warehouse': reported_input_tokens is null
        },
        {'measure': 'output_tokens', 'value': reported_output_tokens, 'by_warehouse': false}
    ]) as m(measures)
    where measures.value is not null
),

cells as (
    {{ scoring_means('measured', keys, ['count(*) filter (where by_warehouse) as n_counted_by_warehouse'], seed) }}
),

runs as (
    select distinct '{{ size }}' as size, source, system from settings
),

run_cells as (
    {{ scoring_cells_per_run(['size', 'source', 'system'], size) }}
),

built as (
    select count(*) as n from {{ datasets }} where task = 'rr'
),

final as (
    select
        run_cells.paper_table,
        run_cells.size,
        run_cells.task,
        run_cells.document_tokens,
        run_cells.chunk_tokens,
        run_cells.row_order,
        run_cells.method,
        run_cells.paper_column,
        run_cells.column_order,
        run_cells.measure,
        run_cells.source,
        run_cells.system,
        cell.method as run_method,
        coalesce(cell.n, 0) as n,
        coalesce(cell.n_counted_by_warehouse, 0) as n_counted_by_warehouse,
        cell.mean::double as mean,
        cell.ci_low,
        cell.ci_high,
        cell.ci_method,
        run_cells.paper_gpt4_turbo,
        run_cells.paper_source,
        case
            when cell.n is not null then null
            when (select n from built) = 0
                then 'not built: no rr dataset is in this build (not in the data dir at this size, or not selected by datasets)'
            when run_cells.system is null then 'no run at this size'
            when run_cells.measure = 'output_tokens' and exists (
                select 1 from cells as other
                where other.source = run_cells.source and other.system = run_cells.system
                    and other.method_family = run_cells.method and other.chunk_tokens = run_cells.chunk_tokens
                    and other.document_tokens = run_cells.document_tokens
            ) then 'not reported: the provider gave no output token counts'
            else 'not built: no ' || run_cells.method || ' arm with chunk_tokens = ' || run_cells.chunk_tokens
                || ' at d = ' || run_cells.document_tokens || ' (methods, e.g. ' || run_cells.method || '_c'
                || run_cells.chunk_tokens || '; rr_lengths; d must fit the size)'
        end as reason
    from run_cells
    left join cells as cell
        on cell.size = run_cells.size
        and cell.source = run_cells.source
        and cell.system = run_cells.system
        and cell.method_family = run_cells.method
        and cell.chunk_tokens = run_cells.chunk_tokens
        and cell.task = run_cells.task
        and cell.document_tokens = run_cells.document_tokens
        and cell.measure = run_cells.measure
)

select * from final
{% endmacro %}


{#
  rr_pages: R&R Table 4 (seed 001 §5, Page retrieval: fuzzy match of direct document QA and exact
  match of the most relevant page, GPT-4 Turbo at d = 40k; seeds/paper_rr_pages.csv), with a row
  for every R&R dataset of the build besides the paper's SQuAD and PubMed (paper values null):
  Answer is the cic arm's fuzzy match (this warehouse's R&R QA prompt asks for the answer only, as
  Table 4's does), Page the share of test questions whose first page named by an ICR arm (stage
  1, any k) is a gold page, each averaged over the answer positions x, with n and the 95%
  interval. Cells nothing filled keep their row with the reason.
#}
{% macro scoring_rr_pages(scores=none, stage_retrieval=none, variants=none, arms=none, paper=none, datasets=none,
                          seed=none, size=none) %}
{%- set scores = scores or loft_ref('scores') -%}
{%- set stage_retrieval = stage_retrieval or loft_ref('stage_retrieval') -%}
{%- set variants = variants or loft_ref('prompt_variants') -%}
{%- set arms = arms or loft_ref('arms') -%}
{%- set paper = paper or loft_ref('paper_rr_pages') -%}
{%- set datasets = datasets or loft_ref('stg_datasets') -%}
{%- set seed = seed if seed is not none else var('seed', 20240612) -%}
{%- set size = size or (loft_size() | trim) -%}
{%- set keys = ['size', 'source', 'system', 'method', 'task', 'dataset', 'document_tokens'] -%}
with

printed as (
    select
        paper_table::bigint as paper_table,
        task::varchar as task,
        dataset::varchar as dataset,
        paper_dataset::varchar as paper_dataset,
        row_order::bigint as row_order,
        document_tokens::bigint as document_tokens,
        method::varchar as method,
        paper_column::varchar as paper_column,
        column_order::bigint as column_order,
        metric::varchar as metric,
        value::double as paper_gpt4_turbo,
        source::varchar as paper_source
    from {{ paper }}
),

built as (
    select distinct task, dataset from {{ datasets }}
),

unprinted as (
    select
        4 as paper_table,
        built.task,
        built.dataset,
        built.dataset as paper_dataset,
        (select max(row_order) from printed) + dense_rank() over (order by built.dataset) as row_order,
        40000 as document_tokens,
        columns.*,
        null::double as paper_gpt4_turbo,
        null::varchar as paper_source
    from built
    cross join (select distinct method, paper_column, column_order, metric from printed) as columns
    where built.task = 'rr' and built.dataset not in (select dataset from printed)
),

paper as (
    select * from printed
    union all by name
    select * from unprinted
),

answer_cells as (
    select *
    from ({{ scoring_rr_cells(scores, variants, arms, seed) }})
    where method_family = 'cic'
),

page_turns as (
    select
        '{{ size }}' as size,
        retrieval.source,
        retrieval.system,
        retrieval.method,
        retrieval.task,
        retrieval.dataset,
        try_cast(regexp_extract(variants.experiment, '^rr_d([0-9]+)$', 1) as bigint) as document_tokens,
        not retrieval.is_answered as is_unanswered,
        coalesce(retrieval.is_answered and list_contains(retrieval.gold_pids, retrieval.retrieved_pids[1]), false)::double
            as value
    from {{ stage_retrieval }} as retrieval
    inner join {{ variants }} as variants using (task, dataset, variant)
    where retrieval.task = 'rr' and retrieval.split = 'test' and retrieval.stage = 1 and retrieval.id_kind = 'pages'
        and retrieval.n_gold > 0 and regexp_full_match(variants.experiment, 'rr_d[0-9]+')
        and regexp_replace(retrieval.method, '(_[rkc][1-9][0-9]*)+$', '') = 'icr'
),

page_cells as (
    select *, 'icr' as method_family
    from ({{ scoring_means('page_turns', keys, ['count(*) filter (where is_unanswered) as n_unanswered'], seed) }})
),

cells as (
    select * from answer_cells
    union all by name
    select * from page_cells
),

runs as (
    select distinct size, source, system from cells where n_unanswered < n
),

run_cells as (
    {{ scoring_cells_per_run(['size', 'source', 'system'], size) }}
),

final as (
    select
        run_cells.paper_table,
        run_cells.size,
        run_cells.task,
        run_cells.dataset,
        run_cells.paper_dataset,
        run_cells.row_order,
        run_cells.document_tokens,
        run_cells.method,
        run_cells.paper_column,
        run_cells.column_order,
        run_cells.metric,
        run_cells.source,
        run_cells.system,
        cell.method as run_method,
        {{ scoring_answered_statistics('cell') }},
        run_cells.paper_gpt4_turbo,
        run_cells.paper_source,
        {{ scoring_rr_reason(
            "'not built: no ' || run_cells.method || ' arm at d = ' || run_cells.document_tokens
                || ' (methods: ' || run_cells.method || '; rr_lengths; d must fit the size)'"
        ) }} as reason
    {{ scoring_rr_cell_joins() }}
)

select * from final
{% endmacro %}


{#
  quest_loft_retrieval: QUEST-LOFT Tables 6-8 (seed 002 App. A, retrieval evaluation; Gemini 1.5
  Pro and Flash on QUEST-LOFT-128K-Revised, Pro on Simple28; seeds/paper_quest_loft.csv). Each
  answer stage is read as a ranked list of entities (pages: documents are matched by their
  LOFT-normalised title, so passages of one page count once): an answer list's answers (CiC and
  RAG baselines), a justified answer's answer_doc_ids (through stage_retrieval; the Justified
  rows are filled by the justified stage of the *_verify methods too), bm25's top k (rag_top{k}
  stage 1, in the paper's Embedding-based retrieval row: bm25 is this warehouse's retriever, as
  in every RAG row; it sees only its k documents, so Recall@100 needs rag_top100) and the
  corpus's first K pages (Naive retrieval: source corpus, system first_k_documents). Each run
  is one row per prompt variant (QUEST-LOFT read the merged_pages corpus). Against the gold
  version's MATCH answers of each rag/quest test query: recall@K (share of gold entities in the
  first K) and MRecall@K (1 when the first K hold every gold entity, or at least K of them), for
  K = 3, 20, 40, 100; a query with no MATCH answer is left out; an unanswered stage retrieved
  nothing. One row per paper cell and run, with n and the 95% interval, the paper's value beside.
#}
{% macro scoring_quest_loft_retrieval(predictions=none, stage_retrieval=none, corpus=none, queries=none,
                                      adjudications=none, paper=none, datasets=none, seed=none, size=none) %}
{%- set predictions = predictions or loft_ref('predictions') -%}
{%- set stage_retrieval = stage_retrieval or loft_ref('stage_retrieval') -%}
{%- set corpus = corpus or loft_ref('corpus') -%}
{%- set queries = queries or loft_ref('queries') -%}
{%- set adjudications = adjudications or loft_ref('stg_gold_adjudications') -%}
{%- set paper = paper or loft_ref('paper_quest_loft') -%}
{%- set datasets = datasets or loft_ref('stg_datasets') -%}
{%- set seed = seed if seed is not none else var('seed', 20240612) -%}
{%- set size = size or (loft_size() | trim) -%}
{%- set ks = [3, 20, 40, 100] -%}
{%- set key = ['source', 'system', 'method', 'stage', 'corpus_id', 'variant', 'split', 'qid', 'turn'] -%}
{%- set justified = "justified(_cot)?(_quest)?(_verify)?" -%}
with

paper as (
    select
        paper_table::bigint as paper_table,
        model::varchar as paper_model,
        question_set::varchar as question_set,
        row_order::bigint as row_order,
        paper_method::varchar as paper_method,
        method_pattern::varchar as method_pattern,
        column_order::bigint as column_order,
        paper_column::varchar as paper_column,
        metric::varchar as metric,
        value::double as paper_value,
        source::varchar as paper_source
    from {{ paper }}
    where paper_table in (6, 7, 8)
),

titles as (
    select corpus_id, pid, loft_normalize(title) as entity, doc_id
    from {{ corpus }}
    where task = 'rag' and dataset = 'quest'
),

{# Answer lists (CiC and RAG baselines): their answers, in order, are the entities. #}
answer_lists as (
    select
        {{ key | join(', ') }},
        is_answered,
        list_transform(coalesce(answer_strict, []::varchar[]), lambda a: loft_normalize(a)) as items
    from {{ predictions }}
    where task = 'rag' and dataset = 'quest'
        and ((method = 'cic' and stage = 1) or (stage = 2 and regexp_full_match(method, 'rag_top[0-9]+')))
),

{# Stages that name documents: a justified answer's answer_doc_ids, bm25's top k. #}
document_lists as (
    select
        retrieval.{{ key | join(', retrieval.') }},
        retrieval.is_answered,
        retrieval.retrieved_pids as pids
    from {{ stage_retrieval }} as retrieval
    where retrieval.task = 'rag' and retrieval.dataset = 'quest' and retrieval.id_kind = 'shown'
        and (
            (retrieval.stage = 1 and regexp_full_match(retrieval.method, '{{ justified }}'))
            or (retrieval.stage = 2 and regexp_full_match(retrieval.method, 'rag_top[0-9]+_{{ justified }}'))
            or (retrieval.stage = 1 and regexp_matches(retrieval.method, '^rag_top[0-9]+'))
        )
),

document_entities as (
    select
        document_lists.{{ key | join(', document_lists.') }},
        any_value(document_lists.is_answered) as is_answered,
        coalesce(
            list(titles.entity order by ranked.rank) filter (where titles.entity is not null), []::varchar[]
        ) as items
    from document_lists
    left join (
        select {{ key | join(', ') }}, unnest(pids) as pid, generate_subscripts(pids, 1) as rank
        from document_lists
    ) as ranked using ({{ key | join(', ') }})
    left join titles on titles.corpus_id = document_lists.corpus_id and titles.pid = ranked.pid
    group by all
),

ranked_lists as (
    select
        *,
        case
            when method = 'cic' then 'cic'
            when stage = 1 and regexp_full_match(method, '{{ justified }}') then regexp_replace(method, '_verify$', '')
            when stage = 1 then 'bm25'
            else regexp_replace(regexp_replace(method, '^rag_top[0-9]+', 'rag_top{k}'), '_verify$', '')
        end as method_pattern
    from (
        select * from answer_lists
        union all by name
        select * from document_entities
    )
),

naive as (
    select
        'corpus' as source,
        'first_k_documents' as system,
        'naive' as method,
        0 as stage,
        queries.corpus_id,
        'default' as variant,
        queries.split,
        queries.qid,
        queries.turn,
        true as is_answered,
        'naive' as method_pattern,
        corpus_order.items
    from {{ queries }} as queries
    inner join (
        select corpus_id, list(entity order by first_doc_id)[1:{{ ks | max }}] as items
        from (select corpus_id, entity, min(doc_id) as first_doc_id from titles group by all)
        group by corpus_id
    ) as corpus_order using (corpus_id)
    where queries.task = 'rag' and queries.dataset = 'quest'
),

verdicts as ({{ scoring_gold_verdicts(adjudications) }}),

judged as (
    select
        '{{ size }}' as size,
        lists.* exclude (items),
        case verdicts.gold_version when 'quest_loft_revised' then 'revised' when 'quest_loft_simple28' then 'simple28'
        end as question_set,
        verdicts.gold_set,
        list_filter(lists.items, lambda e, i: e <> '' and list_position(lists.items, e) = i) as ranked
    from (select * from ranked_lists union all by name select * from naive) as lists
    inner join {{ queries }} as queries
        on queries.task = 'rag' and queries.dataset = 'quest' and queries.qid = lists.qid and queries.turn = lists.turn
    inner join verdicts
        on verdicts.task = 'rag' and verdicts.dataset = 'quest'
        and (verdicts.qid = lists.qid or verdicts.question_key = loft_normalize(queries.query_text))
    where lists.split = 'test' and len(verdicts.gold_set) > 0
),

measured as (
    select
        judged.* exclude (gold_set, ranked),
        measures.metric,
        measures.value
    from judged
    cross join unnest([
        {% for k in ks %}
        {
            'metric': 'mrecall_at_{{ k }}',
            'value': (len(list_filter(gold_set, lambda g: list_contains(ranked[1:{{ k }}], g)))
                      >= least({{ k }}, len(gold_set)))::double
        },
        {
            'metric': 'recall_at_{{ k }}',
            'value': len(list_filter(gold_set, lambda g: list_contains(ranked[1:{{ k }}], g))) / len(gold_set)
        }{{ ',' if not loop.last }}
        {% endfor %}
    ]) as m(measures)
),

cells as (
    {{ scoring_means(
        'measured',
        ['size', 'source', 'system', 'method', 'variant', 'method_pattern', 'question_set', 'metric'],
        ['count(*) filter (where not is_answered) as n_unanswered'],
        seed
    ) }}
),

runs as (
    select distinct
        size, source, system, method, variant, method_pattern, question_set,
        try_cast(nullif(regexp_extract(method, '^rag_top([0-9]+)', 1), '') as bigint) as top_k
    from cells
),

run_cells as ({{ scoring_quest_loft_run_cells(size) }}),

built as (
    select distinct task, dataset from {{ datasets }} where task = 'rag' and dataset = 'quest'
),

final as (
    select
        {{ scoring_quest_loft_cell_columns() }},
        coalesce(cell.n, 0) as n,
        coalesce(cell.n_unanswered, 0) as n_unanswered,
        cell.mean::double as mean,
        cell.ci_low,
        cell.ci_high,
        cell.ci_method,
        run_cells.paper_value,
        run_cells.paper_source,
        case
            when cell.n is not null then null
            when (select count(*) from built) = 0 then {{ scoring_not_in_build("'rag'", "'quest'") }}
            else 'no run of this method on the rag/quest test queries that gold version quest_loft_'
                || run_cells.question_set || ' adjudicates at this size'
        end as reason
    from run_cells
    left join cells as cell
        on cell.size = run_cells.size
        and cell.source = run_cells.source
        and cell.system = run_cells.system
        and cell.method = run_cells.method
        and cell.variant = run_cells.variant
        and cell.method_pattern = run_cells.method_pattern
        and cell.question_set = run_cells.question_set
        and cell.metric = run_cells.metric
)

select * from final
{% endmacro %}
