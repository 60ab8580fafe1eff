{#
  The predictions, as int_predictions stores them: raw text, answers under parse_loft and
  parse_strict with their parse status, and for retrieval the predicted pids.
  - Incremental by run: a build parses only the runs whose predictions_fingerprint
    (int_run_fingerprints) is not yet stored as a run_fingerprint, and drops the rows of runs
    whose fingerprint is gone; a full refresh gives the same rows.
  - A list or JSON the loft rule already holds is stored once: answer_strict(_json) is NULL where
    it equals answer_loft(_json), pred_pids_loft where it equals answer_loft, pred_pids_strict
    where it equals pred_pids_loft (none of them is NULL otherwise for the rows that have them).
    The predictions view (scoring_predictions_view) gives every column back.
  - Rows whose status is not 'ok' (blocked, error, skipped, missing) get empty answers and
    parse status 'not_answered'; imported answer lists get parse status 'given'. Only answered
    rows (status ok) with a generation are parsed.
  - pred_pids_loft: upstream drops a whole query when any turn names an ID that is not in
    the corpus (query_dropped_loft); the list is then empty. Imported pids are stripped
    (str(x).strip()), as upstream does, and never dropped.
  - pred_pids_strict: de-duplicated in model order; an unknown ID keeps its rank as NULL and
    is listed in unknown_ids.
#}
{{ config(
    materialized='incremental',
    incremental_strategy='append',
    on_schema_change='append_new_columns',
    post_hook="{{ incremental_drop_stale_runs(ref('loft_128k__int_run_fingerprints'), 'predictions_fingerprint') }}"
) }}
{%- set prompt_doc_ids = ref('loft_128k__prompt_doc_ids') -%}
{%- set corpus = ref('loft_128k__corpus') -%}
with

runs as ({{ incremental_runs_to_compute(ref('loft_128k__int_run_fingerprints'), 'predictions_fingerprint') }}),

{#- Materialized: each row's Python parse runs once. #}
parsed as materialized (
    select
        rows.*,
        runs.run_fingerprint,
        row_number() over () as row_id,
        rows.status = 'ok' as is_answered,
        case when rows.status = 'ok' and rows.given_answers is null
            then loft_parse_response(rows.raw_text, 'loft', rows.task, rows.method, rows.stage, rows.payload)
        end as parsed_loft,
        case when rows.status = 'ok' and rows.given_answers is null
            then loft_parse_response(rows.raw_text, 'strict', rows.task, rows.method, rows.stage, rows.payload)
        end as parsed_strict
    from {{ view_ref('loft_128k__int_prediction_rows') }} as rows
    inner join runs using (source, system, method, task, dataset, variant, split)
),

answers as not materialized (
    select
        * exclude (parsed_loft, parsed_strict, given_answers, given_answers_json),
        {%- for rule in ['loft', 'strict'] %}
        case
            when not is_answered then []::varchar[]
            when given_answers is not null then given_answers
            else parsed_{{ rule }}.answers
        end as answer_{{ rule }},
        case
            when not is_answered then '[]'
            when given_answers is not null then given_answers_json
            else parsed_{{ rule }}.answers_json
        end as answer_{{ rule }}_json,
        case
            when not is_answered then 'not_answered'
            when given_answers is not null then 'given'
            else parsed_{{ rule }}.status
        end as parse_status_{{ rule }},
        parsed_{{ rule }}.detail as parse_detail_{{ rule }},
        parsed_{{ rule }}.payload as answer_payload_{{ rule }}{{ ',' if not loop.last }}
        {%- endfor %}
    from parsed
),

{#- QUEST-LOFT reads a justified answer to an entity question as the titles of the documents
    it names in answer_doc_ids (seed 002 §3.5), not as free-text names. #}
{%- for rule in ['loft', 'strict'] %}
entity_titles_{{ rule }} as (
    select cited.row_id, list(corpus.title order by cited.position) as titles
    from (
        select answers.row_id, answers.task, answers.dataset, answers.corpus_id, answers.variant, ids.shown_id, ids.position
        from answers,
            unnest(from_json(answers.answer_payload_{{ rule }}, '{"answer_doc_ids": ["VARCHAR"]}').answer_doc_ids)
                with ordinality as ids(shown_id, position)
        where answers.dataset in {{ scoring_entity_answer_datasets() }}
    ) as cited
    inner join {{ prompt_doc_ids }} as doc_ids using (task, dataset, corpus_id, variant, shown_id)
    inner join (select distinct task, dataset, corpus_id, pid, title from {{ corpus }}) as corpus
        using (task, dataset, corpus_id, pid)
    group by cited.row_id
),
{%- endfor %}

retrieval as not materialized (
    select * from answers where task in {{ scoring_id_tasks() }}
),

{#- Imported pids of a dataset without a corpus here (an answer file imported with --queries)
    have nothing to be checked against: they are taken as given, a list at a time. Every other
    row is mapped item by item. #}
unchecked as not materialized (
    select retrieval.*
    from retrieval
    anti join (select distinct task, dataset, corpus_id from {{ corpus }}) as corpora
        using (task, dataset, corpus_id)
    where retrieval.id_space = 'pid'
),

checked as (
    select * from retrieval anti join unchecked using (row_id)
),

loft_items as (
    {{ scoring_mapped_ids('checked', 'answer_loft', false, prompt_doc_ids, corpus) }}
),

strict_items as (
    {{ scoring_mapped_ids('checked', 'answer_strict', true, prompt_doc_ids, corpus) }}
),

loft_lists as (
    select
        row_id,
        {{ scoring_ordered_list('pid') }} as pids,
        {{ scoring_ordered_list('item', 'not is_known') }} as unknown_ids
    from loft_items
    group by row_id
),

strict_lists as (
    select
        row_id,
        {{ scoring_ordered_list('case when is_known then pid end') }} as pids,
        {{ scoring_ordered_list('item', 'not is_known') }} as unknown_ids
    from strict_items
    group by row_id
),

checked_ids as (
    select
        checked.row_id,
        coalesce(loft_lists.pids, []) as pids_loft,
        coalesce(loft_lists.unknown_ids, []) as unknown_ids_loft,
        bool_or(checked.id_space = 'shown' and len(coalesce(loft_lists.unknown_ids, [])) > 0)
            over (partition by checked.source, checked.system, checked.variant, checked.method,
                               checked.task, checked.dataset, checked.qid) as query_dropped_loft,
        coalesce(strict_lists.pids, []) as pids_strict,
        coalesce(strict_lists.unknown_ids, []) as unknown_ids_strict
    from checked
    left join loft_lists using (row_id)
    left join strict_lists using (row_id)
),

{#- Each row once with its ID lists (null outside retrieval): unchecked rows keep theirs as
    given (stripped), so only checked rows join theirs back. #}
with_ids as (
    select
        *,
        null::varchar[] as pids_loft,
        null::varchar[] as unknown_ids_loft,
        null::boolean as query_dropped_loft,
        null::varchar[] as pids_strict,
        null::varchar[] as unknown_ids_strict
    from answers
    where task not in {{ scoring_id_tasks() }}
    union all by name
    select
        * exclude (stripped_strict),
        []::varchar[] as unknown_ids_loft,
        false as query_dropped_loft,
        coalesce({{ scoring_first_occurrences('stripped_strict') }}, []) as pids_strict,
        []::varchar[] as unknown_ids_strict
    from (
        select
            *,
            coalesce({{ scoring_stripped('answer_loft') }}, []) as pids_loft,
            {{ scoring_stripped('answer_strict') }} as stripped_strict
        from unchecked
    )
    union all by name
    select checked.*, checked_ids.* exclude (row_id)
    from checked
    inner join checked_ids using (row_id)
),

predictions as (
    select
        answers.source,
        answers.system,
        answers.prompt_id,
        answers.task,
        answers.dataset,
        answers.corpus_id,
        answers.variant,
        answers.method,
        answers.stage,
        answers.is_final,
        answers.split,
        answers.qid,
        answers.turn,
        answers.call_index,
        answers.n_turns,
        answers.status,
        answers.is_answered,
        answers.raw_text,
        answers.finish_reason,
        answers.payload,
        coalesce(entity_titles_loft.titles, answers.answer_loft) as answer_loft,
        coalesce(to_json(entity_titles_loft.titles)::varchar, answers.answer_loft_json) as answer_loft_json,
        answers.parse_status_loft,
        answers.parse_detail_loft,
        coalesce(entity_titles_strict.titles, answers.answer_strict) as answer_strict,
        coalesce(to_json(entity_titles_strict.titles)::varchar, answers.answer_strict_json) as answer_strict_json,
        answers.parse_status_strict,
        answers.parse_detail_strict,
        answers.answer_payload_strict,
        answers.gold_loft,
        answers.id_space,
        case when answers.query_dropped_loft then []::varchar[] else answers.pids_loft end as pred_pids_loft,
        answers.pids_strict as pred_pids_strict,
        answers.unknown_ids_loft,
        answers.unknown_ids_strict,
        answers.query_dropped_loft,
        answers.import_file,
        answers.import_line,
        answers.run_fingerprint
    from with_ids as answers
    left join entity_titles_loft using (row_id)
    left join entity_titles_strict using (row_id)
),

final as (
    select
        * replace (
            case when answer_strict is distinct from answer_loft then answer_strict end as answer_strict,
            case when answer_strict_json is distinct from answer_loft_json then answer_strict_json end
                as answer_strict_json,
            case when pred_pids_loft is distinct from answer_loft then pred_pids_loft end as pred_pids_loft,
            case when pred_pids_strict is distinct from pred_pids_loft then pred_pids_strict end as pred_pids_strict
        )
    from predictions
)

select * from final
