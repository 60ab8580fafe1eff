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

multi_stage as (
    select * from {{ predictions }} where method <> 'cic'
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
    left join {{ doc_ids }} as doc_ids
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


{#
  verification_scores: a verification stage judged against the gold (QUEST-LOFT Tables 9-11,
  seed 002 App. B). Every answered verification call of a *_verify method (one per candidate)
  is a verdict on its candidate: TRUE when the call kept it. The candidate is gold when its
  normalised text (loft_normalize, as LOFT's RAG scoring) equals a normalised gold answer of
  the turn (queries.gold, rule loft). Per run, dataset, variant and split: the confusion counts
  and the verdicts' precision, recall, accuracy (with its 95% interval) and F1, one row per
  measure, with the paper's value for the same verifier (Basic, CoT, QUEST, CoT - QUEST) beside
  from Tables 9 (Pro, Revised), 10 (Flash, Revised) and 11 (Pro, Simple28). The paper judged a
  fixed set of gold and wrong entities, the warehouse judges its own candidates: the same
  measures, not the same items. A verdict that could not be read is counted apart
  (n_unreadable) and not judged.
#}
{% macro scoring_verification_scores(predictions=none, queries=none, paper=none, seed=none, size=none) %}
{%- set predictions = predictions or loft_ref('predictions') -%}
{%- set queries = queries or loft_ref('queries') -%}
{%- set paper = paper or loft_ref('paper_quest_loft') -%}
{%- set seed = seed if seed is not none else var('seed', 20240612) -%}
{%- set size = size or (loft_size() | trim) -%}
{%- set run = ['source', 'system', 'method', 'task', 'dataset', 'variant', 'split'] -%}
with

calls as (
    select
        {{ run | join(', ') }},
        qid,
        turn,
        call_index,
        parse_status_strict,
        case when json_valid(payload) then json_extract_string(payload, '$.candidate') end as candidate,
        len(coalesce(answer_strict, []::varchar[])) > 0 as judged_true
    from {{ predictions }}
    where loft_verifier(method) is not null and stage = loft_method_stages(method) and is_answered
),

gold as (
    select
        task,
        dataset,
        split,
        qid,
        turn,
        list_transform(coalesce(json_extract_string(gold, '$[*]'), []::varchar[]), answer -> loft_normalize(answer))
            as gold_answers
    from {{ queries }}
),

verdicts as (
    select
        calls.*,
        list_contains(gold.gold_answers, loft_normalize(calls.candidate)) as is_gold
    from calls
    inner join gold using (task, dataset, split, qid, turn)
    where calls.parse_status_strict = 'ok'
),

counts as (
    select
        {{ run | join(', ') }},
        count(*) as n,
        count(*) filter (where judged_true and is_gold) as n_true_positive,
        count(*) filter (where judged_true and not is_gold) as n_false_positive,
        count(*) filter (where not judged_true and is_gold) as n_false_negative,
        count(*) filter (where not judged_true and not is_gold) as n_true_negative
    from verdicts
    group by all
),

unreadable as (
    select {{ run | join(', ') }}, count(*) as n_unreadable
    from calls
    where parse_status_strict is distinct from 'ok'
    group by all
),

accuracy as (
    {{ scoring_means('(select *, (judged_true = is_gold)::double as value from verdicts)', run, [], seed) }}
),

rates as (
    select
        counts.*,
        coalesce(unreadable.n_unreadable, 0) as n_unreadable,
        n_true_positive / nullif(n_true_positive + n_false_positive, 0) as verdict_precision,
        n_true_positive / nullif(n_true_positive + n_false_negative, 0) as verdict_recall,
        accuracy.mean::double as verdict_accuracy,
        accuracy.ci_low as accuracy_ci_low,
        accuracy.ci_high as accuracy_ci_high,
        2 * n_true_positive / nullif(2 * n_true_positive + n_false_positive + n_false_negative, 0) as verdict_f1,
        loft_verifier(counts.method) as verifier
    from counts
    left join unreadable using ({{ run | join(', ') }})
    left join accuracy using ({{ run | join(', ') }})
),

measures as (
    {% for measure in ['verdict_precision', 'verdict_recall', 'verdict_accuracy', 'verdict_f1'] %}
    select
        rates.* exclude (verdict_precision, verdict_recall, verdict_accuracy, verdict_f1, accuracy_ci_low, accuracy_ci_high),
        '{{ measure }}' as measure,
        rates.{{ measure }} as value,
        {% if measure == 'verdict_accuracy' %}accuracy_ci_low{% else %}null::double{% endif %} as ci_low,
        {% if measure == 'verdict_accuracy' %}accuracy_ci_high{% else %}null::double{% endif %} as ci_high
    from rates
    {{ 'union all' if not loop.last }}
    {% endfor %}
),

paper as (
    select
        paper_method::varchar as verifier,
        metric::varchar as measure,
        any_value(value::double) filter (where paper_table = 9) as paper_pro_revised,
        any_value(value::double) filter (where paper_table = 10) as paper_flash_revised,
        any_value(value::double) filter (where paper_table = 11) as paper_pro_simple28
    from {{ paper }}
    where paper_table in (9, 10, 11)
    group by all
),

final as (
    select
        '{{ size }}' as size,
        measures.* exclude (value),
        measures.value::double as value,
        paper.paper_pro_revised,
        paper.paper_flash_revised,
        paper.paper_pro_simple28
    from measures
    left join paper using (verifier, measure)
)

select * from final
{% endmacro %}
