{#
  rr_positions: R&R Tables 7-9 (seed 001 App. B: Base, Rep and R&R with GPT-4 Turbo on NQ,
  SQuAD and PubMed by document length d and answer position x; seeds/paper_rr_positions.csv):
  one row per paper cell and run (size, source, system), filled from position_curves (the
  rr_d{d} experiment's point at x tokens, test split) by every arm of the method family
  (run_method), with n and the 95% interval, the paper's value beside. Averaged over x, the
  paper's rows are its Table 1 (rr_methods). Cells nothing filled keep their row with the reason.
#}
{%- set size = config.get('loft_size') -%}
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
    from {{ ref('loft_128k__paper_rr_positions') }}
),

cells as (
    select
        *,
        try_cast(regexp_extract(experiment, '^rr_d([0-9]+)$', 1) as bigint) as document_tokens,
        position::bigint as answer_position,
        regexp_replace(method, '(_[rkc][1-9][0-9]*)+$', '') as method_family
    from {{ ref('loft_128k__position_curves') }}
    where task = 'rr' and split = 'test' and rule = 'loft' and regexp_full_match(experiment, 'rr_d[0-9]+')
),

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
