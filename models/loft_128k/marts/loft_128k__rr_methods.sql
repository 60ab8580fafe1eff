{%- set scores = ref('loft_128k__scores') -%}
{%- set variants = ref('loft_128k__prompt_variants') -%}
{%- set arms = ref('loft_128k__arms') -%}

{%- set seed = var('seed', 20240612) -%}
{%- set size = config.get('loft_size') -%}
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
    from {{ ref('loft_128k__paper_rr_table1') }}
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
    select distinct task, dataset from {{ ref('loft_128k__stg_datasets') }}
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
