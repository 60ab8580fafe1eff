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
















