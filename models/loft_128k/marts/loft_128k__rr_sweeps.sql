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
{%- set scores = ref('loft_128k__scores') -%}
{%- set variants = ref('loft_128k__prompt_variants') -%}
{%- set arms = ref('loft_128k__arms') -%}

{%- set seed = var('seed', 20240612) -%}
{%- set size = config.get('loft_size') -%}
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
    from {{ ref('loft_128k__paper_rr_sweeps') }}
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
    select distinct task, dataset from {{ ref('loft_128k__stg_datasets') }}
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
