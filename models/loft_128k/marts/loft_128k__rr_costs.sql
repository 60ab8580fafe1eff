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
{%- set prompt_tokens = none -%}
{%- set seed = var('seed', 20240612) -%}
{%- set size = config.get('loft_size') -%}
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
    from {{ ref('loft_128k__paper_rr_costs') }}
),

sent_tokens as (
    {% if prompt_tokens %}
    select * from {{ prompt_tokens }}
    {% else %}
    select 1 as stage, null::varchar as system, prompt_id, n_tokens_total from {{ ref('loft_128k__prompts') }}
    union all
    select 2 as stage, system, prompt_id, n_tokens_total from {{ ref('loft_128k__int_stage2_prompts') }}
    union all
    select 3 as stage, system, prompt_id, n_tokens_total from {{ ref('loft_128k__int_stage3_prompts') }}
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
    from {{ ref('loft_128k__responses') }} as responses
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
    inner join {{ ref('loft_128k__prompt_variants') }} as variants using (task, dataset, variant)
    inner join {{ ref('loft_128k__arms') }} as arms using (task, dataset, variant, method)
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
    select count(*) as n from {{ ref('loft_128k__stg_datasets') }} where task = 'rr'
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
