{#
  rr_pages: R&R Table 4 (seed 001 §5, Page retrieval: fuzzy match of direct document QA and exact
  match of the most relevant page, GPT-4 Turbo at d = 40k; seeds/paper_rr_pages.csv), with a row
  for every R&R dataset of the build besides the paper's SQuAD and PubMed (paper values null):
  Answer is the answer_only arm's fuzzy match (Table 4's direct QA: the Baseline prompt without
  the page containing the answer), Page the share of test questions whose first page named by an ICR arm (stage
  1, any k) is a gold page, each averaged over the answer positions x, with n and the 95%
  interval. Cells nothing filled keep their row with the reason.
#}
{%- set scores = ref('loft_128k__scores') -%}

{%- set variants = ref('loft_128k__prompt_variants') -%}
{%- set arms = ref('loft_128k__arms') -%}

{%- set seed = var('seed', 20240612) -%}
{%- set size = config.get('loft_size') -%}
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
    from {{ ref('loft_128k__paper_rr_pages') }}
),

built as (
    select distinct task, dataset from {{ ref('loft_128k__stg_datasets') }}
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
    where method_family = 'answer_only'
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
    from {{ ref('loft_128k__stage_retrieval') }} as retrieval
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
