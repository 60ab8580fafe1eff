{#
  stage_retrieval: one row per run (source, system, method), stage and query turn whose parsed
  items name documents (loft_stage_ids: `shown` IDs, as bm25's top k and the documents a
  justified answer cites in answer_doc_ids; `pages`, as ICR's page numbers, page p being the
  document at position p - 1). The items (the strict rule's list; a multi-call stage's calls
  pooled in call order) map to pids through prompt_doc_ids; the retrieved pids keep their first
  rank. Against the turn's gold pids: recall, precision, whether every gold document was found,
  and recall_at_k for k = 1, 5, 10, 20, 50, 100. Unanswered stages retrieved nothing (0); turns
  without gold documents have null recall. Items that name no shown document are counted
  (n_unmapped), never dropped without a word.
#}
{%- set size = config.get('loft_size') -%}

{%- set key = ['source', 'system', 'method', 'stage', 'is_final', 'task', 'dataset', 'corpus_id', 'variant', 'split', 'qid',
               'turn'] -%}
with

multi_stage as (
    select * from {{ ref('loft_128k__predictions') }} where method <> 'cic'
),

stage_kinds as (
    select method, stage, loft_stage_ids(method, stage) as id_kind
    from (select distinct method, stage from multi_stage)
),

staged as (
    select multi_stage.*, stage_kinds.id_kind
    from multi_stage
    inner join stage_kinds using (method, stage)
),

calls as (
    select
        {{ key | join(', ') }},
        id_kind,
        status,
        is_answered,
        call_index,
        case
            when not is_answered then []::varchar[]
            when json_exists(answer_payload_strict, '$.answer_doc_ids')
                then json_extract_string(answer_payload_strict, '$.answer_doc_ids[*]')
            else coalesce(answer_strict, []::varchar[])
        end as items
    from staged
    where id_kind is not null
),

pooled as (
    select
        {{ key | join(', ') }},
        any_value(id_kind) as id_kind,
        bool_and(is_answered) as is_answered,
        count(*) as n_calls,
        flatten(list(items order by call_index)) as items
    from calls
    group by all
),

unnested as (
    select {{ key | join(', ') }}, id_kind, trim(unnest(items)) as item, generate_subscripts(items, 1) as item_rank
    from pooled
),

mapped as (
    {% for id_kind, names in [('shown', 'doc_ids.shown_id = unnested.item'),
                              ('pages', 'doc_ids.position = try_cast(unnested.item as bigint) - 1')] %}
    select unnested.*, doc_ids.pid
    from unnested
    left join {{ ref('loft_128k__prompt_doc_ids') }} as doc_ids
        on doc_ids.task = unnested.task
        and doc_ids.dataset = unnested.dataset
        and doc_ids.corpus_id = unnested.corpus_id
        and doc_ids.variant = unnested.variant
        and {{ names }}
    where unnested.id_kind = '{{ id_kind }}'
    {{ 'union all' if not loop.last }}
    {% endfor %}
),

first_ranks as (
    select {{ key | join(', ') }}, pid, min(item_rank) as first_rank
    from mapped
    where pid is not null
    group by all
),

retrieved as (
    select {{ key | join(', ') }}, list(pid order by first_rank) as retrieved_pids
    from first_ranks
    group by all
),

unmapped as (
    select {{ key | join(', ') }}, count(*) filter (where pid is null) as n_unmapped
    from mapped
    group by all
),

gold as (
    select task, dataset, corpus_id, split, qid, turn, list_distinct(gold_pids) as gold_pids
    from {{ ref('loft_128k__queries') }}
),

joined as (
    select
        pooled.* exclude (items),
        pooled.items,
        coalesce(retrieved.retrieved_pids, []::varchar[]) as retrieved_pids,
        coalesce(unmapped.n_unmapped, 0) as n_unmapped,
        coalesce(gold.gold_pids, []::varchar[]) as gold_pids
    from pooled
    left join retrieved using ({{ key | join(', ') }})
    left join unmapped using ({{ key | join(', ') }})
    left join gold using (task, dataset, corpus_id, split, qid, turn)
),

final as (
    select
        '{{ size }}' as size,
        *,
        len(retrieved_pids) as n_retrieved,
        len(gold_pids) as n_gold,
        len(list_intersect(retrieved_pids, gold_pids)) as n_gold_found,
        case when len(gold_pids) > 0 then len(list_intersect(retrieved_pids, gold_pids)) / len(gold_pids) end as recall,
        case when len(retrieved_pids) > 0 then len(list_intersect(retrieved_pids, gold_pids)) / len(retrieved_pids) end
            as precision,
        case when len(gold_pids) > 0 then len(list_intersect(retrieved_pids, gold_pids)) = len(gold_pids) end
            as found_all_gold,
        {% for k in [1, 5, 10, 20, 50, 100] %}
        case when len(gold_pids) > 0 then len(list_intersect(retrieved_pids[1:{{ k }}], gold_pids)) / len(gold_pids) end
            as recall_at_{{ k }}{{ ',' if not loop.last }}
        {% endfor %}
    from joined
)

select * from final
