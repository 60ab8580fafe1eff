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
{%- set adjudications = ref('loft_128k__stg_gold_adjudications') -%}

{%- set seed = var('seed', 20240612) -%}
{%- set size = config.get('loft_size') -%}
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
    from {{ ref('loft_128k__paper_quest_loft') }}
    where paper_table in (6, 7, 8)
),

titles as (
    select corpus_id, pid, loft_normalize(title) as entity, doc_id
    from {{ ref('loft_128k__corpus') }}
    where task = 'rag' and dataset = 'quest'
),

{# Answer lists (CiC and RAG baselines): their answers, in order, are the entities. #}
answer_lists as (
    select
        {{ key | join(', ') }},
        is_answered,
        list_transform(coalesce(answer_strict, []::varchar[]), lambda a: loft_normalize(a)) as items
    from {{ ref('loft_128k__predictions') }}
    where task = 'rag' and dataset = 'quest'
        and ((method = 'cic' and stage = 1) or (stage = 2 and regexp_full_match(method, 'rag_top[0-9]+')))
),

{# Stages that name documents: a justified answer's answer_doc_ids, bm25's top k. #}
document_lists as (
    select
        retrieval.{{ key | join(', retrieval.') }},
        retrieval.is_answered,
        retrieval.retrieved_pids as pids
    from {{ ref('loft_128k__stage_retrieval') }} as retrieval
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
    from {{ ref('loft_128k__queries') }} as queries
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
    inner join {{ ref('loft_128k__queries') }} as queries
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
    select distinct task, dataset from {{ ref('loft_128k__stg_datasets') }} where task = 'rag' and dataset = 'quest'
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
