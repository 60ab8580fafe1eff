{#
  verification_scores: a verification stage judged against the gold (QUEST-LOFT Tables 9-11,
  seed 002 App. B). Every answered verification call of a *_verify method (one per candidate)
  is a verdict on its candidate: TRUE when the call kept it. The candidate is gold when its
  normalised text (loft_normalize, as LOFT's RAG scoring) equals a normalised gold answer of
  the turn under the row's gold_version: release is queries.gold (rule loft); an adjudicated
  version (stg_gold_adjudications, e.g. quest_loft_revised, quest_loft_simple28) takes the MATCH
  answers of each query it adjudicates, leaves its DEBATABLE candidates unjudged, and keeps the
  release gold of every query it does not adjudicate, so each version judges the whole split.
  Per run, dataset, variant, split and gold version: the confusion counts and the verdicts'
  precision, recall, accuracy (with its 95% interval) and F1, one row per measure, with the
  paper's value for the same verifier (Basic, CoT, QUEST, CoT - QUEST) beside the version it was
  measured on: Tables 9 (Pro) and 10 (Flash) on quest_loft_revised, 11 (Pro) on
  quest_loft_simple28. The paper judged a fixed set of gold and wrong entities, the warehouse
  judges its own candidates: the same measures, not the same items. A verdict that could not be
  read is counted apart (n_unreadable) and not judged.
#}
{%- set seed = var('seed', 20240612) -%}
{%- set size = config.get('loft_size') -%}
{%- set run = ['source', 'system', 'method', 'task', 'dataset', 'variant', 'split', 'gold_version'] -%}
with

calls as (
    select
        {{ run[:-1] | join(', ') }},
        qid,
        turn,
        call_index,
        parse_status_strict,
        case when json_valid(payload) then json_extract_string(payload, '$.candidate') end as candidate,
        len(coalesce(answer_strict, []::varchar[])) > 0 as judged_true
    from {{ ref('loft_128k__predictions') }}
    where loft_verifier(method) is not null and stage = loft_method_stages(method) and is_answered
),

queries as (
    select
        task,
        dataset,
        split,
        qid,
        turn,
        query_text,
        list_transform(coalesce(json_extract_string(gold, '$[*]'), []::varchar[]), answer -> loft_normalize(answer))
            as gold_answers
    from {{ ref('loft_128k__queries') }}
),

adjudicated as ({{ scoring_gold_verdicts(ref('loft_128k__stg_gold_adjudications')) }}),

versions as (
    select distinct gold_version, task, dataset from adjudicated
),

gold as (
    select '{{ scoring_release_gold() }}' as gold_version, task, dataset, split, qid, turn, gold_answers, []::varchar[] as debatable
    from queries
    union all
    select
        versions.gold_version,
        queries.task,
        queries.dataset,
        queries.split,
        queries.qid,
        queries.turn,
        coalesce(adjudicated.gold_set, queries.gold_answers) as gold_answers,
        coalesce(adjudicated.debatable, []::varchar[]) as debatable
    from queries
    inner join versions using (task, dataset)
    left join adjudicated
        on adjudicated.gold_version = versions.gold_version
        and adjudicated.task = queries.task
        and adjudicated.dataset = queries.dataset
        and (adjudicated.qid = queries.qid or adjudicated.question_key = loft_normalize(queries.query_text))
    qualify row_number() over (
        partition by versions.gold_version, queries.task, queries.dataset, queries.split, queries.qid, queries.turn
        order by adjudicated.qid nulls last
    ) = 1
),

judged_calls as (
    select calls.*, gold.gold_version, gold.gold_answers, gold.debatable
    from calls
    inner join gold using (task, dataset, split, qid, turn)
),

verdicts as (
    select
        *,
        list_contains(gold_answers, loft_normalize(candidate)) as is_gold
    from judged_calls
    where parse_status_strict = 'ok' and not list_contains(debatable, loft_normalize(candidate))
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
    from judged_calls
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
    from {{ ref('loft_128k__paper_quest_loft') }}
    where paper_table in (9, 10, 11)
    group by all
),

final as (
    select
        '{{ size }}' as size,
        measures.* exclude (value),
        measures.value::double as value,
        case when measures.gold_version = 'quest_loft_revised' then paper.paper_pro_revised end as paper_pro_revised,
        case when measures.gold_version = 'quest_loft_revised' then paper.paper_flash_revised end as paper_flash_revised,
        case when measures.gold_version = 'quest_loft_simple28' then paper.paper_pro_simple28 end as paper_pro_simple28
    from measures
    left join paper using (verifier, measure)
)

select * from final
