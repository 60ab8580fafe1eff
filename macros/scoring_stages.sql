{#
  Stages scored one by one: what each stage of a method retrieved, against the query's gold
  documents, and how the final answer depends on it.
#}

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
{% macro scoring_stage_retrieval(predictions=none, doc_ids=none, queries=none, size=none) %}
{%- set predictions = predictions or loft_ref('predictions') -%}
{%- set size = size or (loft_size() | trim) -%}
{%- set doc_ids = doc_ids or loft_ref('prompt_doc_ids') -%}
{%- set queries = queries or loft_ref('queries') -%}
{%- set key = ['source', 'system', 'method', 'stage', 'is_final', 'task', 'dataset', 'corpus_id', 'variant', 'split', 'qid',
               'turn'] -%}
with

staged as (
    select *, loft_stage_ids(method, stage) as id_kind
    from (select * from {{ predictions }} where method <> 'cic')
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
    select unnested.*, doc_ids.pid
    from unnested
    left join {{ doc_ids }} as doc_ids
        on doc_ids.task = unnested.task
        and doc_ids.dataset = unnested.dataset
        and doc_ids.corpus_id = unnested.corpus_id
        and doc_ids.variant = unnested.variant
        and doc_ids.shown_id = unnested.item
    where unnested.id_kind = 'shown'
    union all
    select unnested.*, doc_ids.pid
    from unnested
    left join {{ doc_ids }} as doc_ids
        on doc_ids.task = unnested.task
        and doc_ids.dataset = unnested.dataset
        and doc_ids.corpus_id = unnested.corpus_id
        and doc_ids.variant = unnested.variant
        and doc_ids.position = try_cast(unnested.item as bigint) - 1
    where unnested.id_kind = 'pages'
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
    from {{ queries }}
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
{% endmacro %}


{#
  stage_metrics: the means of stage_retrieval per run, stage, dataset, variant and split, one
  row per measure (recall, precision, found_all_gold, recall_at_k), with n and the 95% interval as
  in metrics. Turns without gold documents are left out (they have nothing to find); precision
  counts only the turns that retrieved something.
#}
{% macro scoring_stage_metrics(stage_retrieval=none, seed=none) %}
{%- set stage_retrieval = stage_retrieval or loft_ref('stage_retrieval') -%}
{%- set seed = seed if seed is not none else var('seed', 20240612) -%}
{%- set measures = ['recall', 'precision', 'found_all_gold', 'recall_at_1', 'recall_at_5', 'recall_at_10', 'recall_at_20',
                    'recall_at_50', 'recall_at_100'] -%}
{%- set keys = ['size', 'source', 'system', 'method', 'stage', 'is_final', 'id_kind', 'task', 'dataset', 'variant',
                'split', 'measure'] -%}
with

values_by_measure as (
    {% for measure in measures %}
    select
        size, source, system, method, stage, is_final, id_kind, task, dataset, variant, split, is_answered,
        '{{ measure }}' as measure,
        {{ measure }}::double as value
    from {{ stage_retrieval }}
    where n_gold > 0 and {{ measure }} is not null
    {{ 'union all' if not loop.last }}
    {% endfor %}
),

means as (
    {{ scoring_means('values_by_measure', keys, ['count(*) filter (where not is_answered) as n_unanswered'], seed) }}
),

final as (
    select {{ keys | join(', ') }}, n, n_unanswered, mean::double as mean, ci_low, ci_high, ci_method
    from means
)

select * from final
{% endmacro %}


{#
  error_attribution: a retrieval miss or a reading miss. One row per run (source, system,
  method), dataset, variant and split of a method whose earlier stage retrieves documents:
  each final scored turn (primary metric, loft rule) beside whether that stage found every gold
  document of the turn. n_retrieval_hit / n_retrieval_miss count the turns; accuracy_given_hit
  (with its 95% interval) is the reading accuracy when the documents were there,
  accuracy_given_miss what the final stage got right without them; n_reading_miss counts the
  hits answered wrong (score below 1). Turns without gold documents are left out.
#}
{% macro scoring_error_attribution(stage_retrieval=none, scores=none, seed=none) %}
{%- set stage_retrieval = stage_retrieval or loft_ref('stage_retrieval') -%}
{%- set scores = scores or loft_ref('scores') -%}
{%- set seed = seed if seed is not none else var('seed', 20240612) -%}
{%- set run = ['size', 'source', 'system', 'method', 'task', 'dataset', 'variant', 'split'] -%}
with

retrieval_stage as (
    select source, system, method, task, dataset, variant, split, qid, turn, stage as retrieval_stage, found_all_gold
    from {{ stage_retrieval }}
    where not is_final and n_gold > 0
    qualify stage = min(stage) over (partition by source, system, method, task, dataset, variant, split, qid, turn)
),

final_scores as (
    select size, source, system, method, task, dataset, variant, split, qid, turn, metric_name, value
    from {{ scores }}
    where is_primary and rule = 'loft' and grain = 'turn'
),

turns as (
    select final_scores.*, retrieval_stage.retrieval_stage, retrieval_stage.found_all_gold
    from final_scores
    inner join retrieval_stage using (source, system, method, task, dataset, variant, split, qid, turn)
),

given_hit as (
    {{ scoring_means('(select * from turns where found_all_gold)', run, [], seed) }}
),

counts as (
    select
        {{ run | join(', ') }},
        any_value(metric_name) as metric_name,
        any_value(retrieval_stage) as retrieval_stage,
        count(*) as n,
        count(*) filter (where found_all_gold) as n_retrieval_hit,
        count(*) filter (where not found_all_gold) as n_retrieval_miss,
        count(*) filter (where found_all_gold and value < 1) as n_reading_miss,
        {{ scoring_order_free_mean('value') }}::double as accuracy,
        ({{ scoring_order_free_mean('value') }} filter (where not found_all_gold))::double as accuracy_given_miss
    from turns
    group by all
),

final as (
    select
        counts.*,
        given_hit.mean::double as accuracy_given_hit,
        given_hit.ci_low as accuracy_given_hit_ci_low,
        given_hit.ci_high as accuracy_given_hit_ci_high
    from counts
    left join given_hit using ({{ run | join(', ') }})
)

select * from final
{% endmacro %}
