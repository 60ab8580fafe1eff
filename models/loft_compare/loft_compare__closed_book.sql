{#
  closed_book: LOFT Table 3 (seed 000 §4.4): RAG without the corpus (prompt variant
  closed_book) against the corpus-in-context prompt (default) of the same run on the same
  questions, on the paper's dev split at 32k and test split at 128k (seeds/paper_table3.csv).
  It reads scaling_scores, so both sizes must be built in the warehouse. One row per paper cell
  and run (source, system, method): the closed-book mean with n and 95% interval, the paired
  difference from the default prompt with its bootstrap interval, and the paper's value and
  difference beside. A cell nothing filled keeps its row and says why.
#}
{%- set seed = var('seed', 20240612) -%}
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
    from {{ source('reference', 'paper_table3') }}
),

closed as (
    select * from {{ ref('loft_compare__scaling_scores') }} where variant = 'closed_book'
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
        loft_bootstrap_interval(list(closed.value - cic.value order by closed.qid, closed.turn), {{ seed }}) as interval,
        min(closed.value - cic.value) < max(closed.value - cic.value) as has_spread
    from closed
    inner join (select * from {{ ref('loft_compare__scaling_scores') }} where variant = 'default') as cic
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
        case when differences.has_spread then differences.interval.low end as difference_ci_low,
        case when differences.has_spread then differences.interval.high end as difference_ci_high,
        {{ scoring_no_information_note('differences.has_spread', 'differences.n_paired', 'differences.difference') }} as difference_note,
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
    left join {{ ref('loft_compare__sizes') }} as built on built.size = run_cells.size
)

select * from final
