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
{%- set size = config.get('loft_size') -%}
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
    from {{ ref('loft_128k__paper_quest_loft') }}
    where paper_table in (3, 4, 5)
),

quest_metrics as (
    select
        *,
        case gold_version when 'quest_loft_revised' then 'revised' when 'quest_loft_simple28' then 'simple28' end
            as question_set,
        regexp_replace(method, '^rag_top[0-9]+', 'rag_top{k}') as method_pattern,
        try_cast(nullif(regexp_extract(method, '^rag_top([0-9]+)', 1), '') as bigint) as top_k
    from {{ ref('loft_128k__metrics') }}
    where task = 'rag' and dataset = 'quest' and split = 'test' and rule = 'revised' and grain = 'turn'
),

runs as (
    select distinct size, source, system, method, variant, method_pattern, top_k, question_set
    from quest_metrics
    where run_status in ('scored', 'pending') and question_set is not null
),

run_cells as ({{ scoring_quest_loft_run_cells(size) }}),

built as (
    select distinct task, dataset from {{ ref('loft_128k__stg_datasets') }} where task = 'rag' and dataset = 'quest'
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
