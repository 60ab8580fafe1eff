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
{%- set size = config.get('loft_size') -%}
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
    from {{ ref('loft_128k__paper_table4') }}
),

built as (
    select distinct task, dataset from {{ ref('loft_128k__stg_datasets') }}
),

test_metrics as (
    select metrics.* rename (variant as ablation)
    from {{ ref('loft_128k__metrics') }} as metrics
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
    from {{ ref('loft_128k__paired_comparisons') }}
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
            when run_cells.source = 'import'
                then 'not imported: no prediction file of prompt variant ' || run_cells.ablation
                     || ' (loft import-predictions --variant ' || run_cells.ablation || ')'
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
