{#
  Predictions: every answer a system owes, parsed under both rules, retrieval IDs mapped to pids.

  Relations are arguments so the SQL can be rendered and tested outside dbt; in a model the
  defaults point at the same-size siblings. The loft_parse_* functions come from the dbt-duckdb
  plugin loft_warehouse.scoring.dbt_plugin.
#}

{#
  The queries scoring reads: the size's queries, with their dataset's is_multi_answer, and the
  queries of LOFT answer files landed with `loft import-predictions --queries`.
#}
{% macro scoring_scored_queries(queries=none, datasets=none, imported=none) %}
{%- set queries = queries or loft_view_ref('queries') -%}
{%- set datasets = datasets or loft_view_ref('stg_datasets') -%}
{%- set imported = imported or loft_view_ref('int_imported_queries') -%}
with

built as (
    select queries.*, coalesce(datasets.is_multi_answer, false) as is_multi_answer
    from {{ queries }} as queries
    left join {{ datasets }} as datasets using (task, dataset)
),

final as (
    select * from built
    union all by name
    select * from {{ imported }}
)

select * from final
{% endmacro %}


{#
  The runs of `responses` (a run: source, system, task, dataset, variant, method, split, with a
  stage-1 response) and the quick-try limit N each was sent under (responses.query_limit; null
  for a full run), which scoring reads instead of the var of whatever build rescores it.
#}
{% macro scoring_run_limits(responses) %}
    select source, system, task, dataset, variant, method, split, max(query_limit) as query_limit
    from {{ responses }}
    where stage = 1
    group by all
{% endmacro %}


{#
  One row per (system, prompt) of every run, of every stage, plus imported predictions. A run is
  a (system, task, dataset, variant, method, split) with at least one stage-1 response; a
  stage-1 prompt of a run without a response is kept with status 'missing' so that it scores 0
  instead of vanishing. A quick try's run (responses.query_limit N) owes only the first N
  queries of its dataset and split, whatever the build that scores it says. A multi-stage
  method's later stages have the prompts built from the system's own answers in the stage
  before (stage_prompts, from stage_answers); a query turn
  whose final-stage prompts could not be built gets one final-stage row: 'skipped_upstream'
  (an earlier stage failed or named nothing usable), or an answered empty row when the stage
  before the final one answered with nothing to verify (a justified answer without
  candidates). is_final marks the rows of a method's last stage, which are what is scored.
#}
{% macro scoring_prediction_rows(
    responses=none, prompts=none, imports=none, stage_prompts=none, stage_answers=none, queries=none
) %}
{%- set responses = responses or loft_view_ref('responses') -%}
{%- set prompts = prompts or loft_view_ref('prompts') -%}
{%- set imports = imports or loft_view_ref('int_imported_predictions') -%}
{%- set stage_prompts = stage_prompts or '(select * from ' ~ loft_view_ref('int_stage2_prompts')
    ~ ' union all by name select * from ' ~ loft_view_ref('int_stage3_prompts') ~ ')' -%}
{%- set stage_answers = stage_answers or '(select * from ' ~ loft_view_ref('int_stage1_answers')
    ~ ' union all by name select * from ' ~ loft_view_ref('int_stage2_answers') ~ ')' -%}
{%- set queries = queries or loft_view_ref('int_scored_queries') -%}
with

{#- Seeded order, as inference.warehouse.first_queries picks a quick try's queries. #}
ranked_queries as (
    select distinct
        task, dataset, split, qid,
        dense_rank() over (partition by task, dataset, split order by query_rank, qid) as position
    from {{ queries }}
    where split in ('dev', 'test')
),

runs as ({{ scoring_run_limits(responses) }}),

owed as (
    select runs.system, runs.task, runs.dataset, runs.variant, runs.method, runs.split, ranked.qid
    from runs
    inner join ranked_queries as ranked using (task, dataset, split)
    where runs.query_limit is null or ranked.position <= runs.query_limit
),

stage_1 as (
    select
        runs.system,
        prompts.prompt_id,
        prompts.task,
        prompts.dataset,
        prompts.corpus_id,
        prompts.variant,
        prompts.method,
        prompts.stage,
        prompts.split,
        prompts.qid,
        prompts.turn,
        prompts.call_index,
        prompts.n_turns,
        prompts.payload,
        coalesce(responses.status, 'missing') as status,
        responses.raw_text,
        responses.finish_reason
    from {{ prompts }} as prompts
    inner join owed as runs using (task, dataset, variant, method, split, qid)
    left join {{ responses }} as responses
        on responses.system = runs.system
        and responses.prompt_id = prompts.prompt_id
),

stage_2 as (
    select
        stage_prompts.system,
        stage_prompts.prompt_id,
        stage_prompts.task,
        stage_prompts.dataset,
        stage_prompts.corpus_id,
        stage_prompts.variant,
        stage_prompts.method,
        stage_prompts.stage,
        stage_prompts.split,
        stage_prompts.qid,
        stage_prompts.turn,
        stage_prompts.call_index,
        stage_prompts.n_turns,
        stage_prompts.payload,
        coalesce(responses.status, 'missing') as status,
        responses.raw_text,
        responses.finish_reason
    from {{ stage_prompts }} as stage_prompts
    left join {{ responses }} as responses
        on responses.system = stage_prompts.system
        and responses.prompt_id = stage_prompts.prompt_id
),

{#- A justified answer (the stage before the final one) that parsed (strict) but gave
    verification nothing to judge is an answer: the empty one. Anything else without a
    final-stage prompt was skipped upstream. #}
upstream as (
    select
        system, task, dataset, corpus_id, variant, method, qid, turn,
        bool_and(status = 'ok' and parse_status_strict in ('ok', 'repaired')) as parsed_everywhere,
        bool_or(payload_strict is not null) as has_payload
    from {{ stage_answers }}
    where stage = loft_method_stages(method) - 1
    group by all
),

unbuilt as (
    select distinct
        owed.system, owed.task, owed.dataset, owed.corpus_id, owed.variant, owed.method,
        owed.split, owed.qid, owed.turn, owed.n_turns, owed.final_stage
    from (select *, loft_method_stages(method) as final_stage from stage_1) as owed
    anti join (select * from {{ stage_prompts }} where stage = loft_method_stages(method)) as built
        using (system, task, dataset, corpus_id, variant, method, qid, turn)
    where owed.final_stage > 1
),

skipped as (
    select
        unbuilt.system,
        unbuilt.task || '/' || unbuilt.dataset || '/' || unbuilt.corpus_id || '/' || unbuilt.variant || '/'
            || unbuilt.qid || '/' || unbuilt.turn || '/' || unbuilt.method || '/s' || unbuilt.final_stage || '/c0'
            as prompt_id,
        unbuilt.task,
        unbuilt.dataset,
        unbuilt.corpus_id,
        unbuilt.variant,
        unbuilt.method,
        unbuilt.final_stage as stage,
        unbuilt.split,
        unbuilt.qid,
        unbuilt.turn,
        0::bigint as call_index,
        unbuilt.n_turns,
        case when coalesce(upstream.parsed_everywhere and upstream.has_payload, false)
             then '{"nothing_to_verify": true}' end as payload,
        case when coalesce(upstream.parsed_everywhere and upstream.has_payload, false) then 'ok'
             else 'skipped_upstream' end as status,
        null::varchar as raw_text,
        null::varchar as finish_reason
    from unbuilt
    left join upstream using (system, task, dataset, corpus_id, variant, method, qid, turn)
),

inference as (
    select * from stage_1
    union all by name
    select * from stage_2
    union all by name
    select * from skipped
),

system_sources as (
    select distinct system, source from {{ responses }}
),

final_inference as (
    select
        coalesce(system_sources.source, 'inference') as source,
        inference.*,
        stage = loft_method_stages(method) as is_final,
        null::varchar[] as given_answers,
        null::varchar as given_answers_json,
        null::varchar as gold_loft,
        'shown' as id_space,
        null::varchar as import_file,
        null::bigint as import_line
    from inference
    left join system_sources using (system)
),

imported as (
    select
        'import' as source,
        system,
        prompt_id,
        task,
        dataset,
        corpus_id,
        variant,
        'cic' as method,
        1::bigint as stage,
        split,
        qid,
        turn,
        0::bigint as call_index,
        n_turns,
        null::varchar as payload,
        status,
        raw_text,
        null::varchar as finish_reason,
        true as is_final,
        given_answers,
        given_answers_json,
        gold_loft,
        id_space,
        import_file,
        import_line
    from {{ imports }}
)

select * from final_inference
union all by name
select * from imported
{% endmacro %}


{#
  list(value order by pos) of a group, as an unordered list of (pos, value) sorted afterwards:
  much faster than an ordered aggregate for millions of short groups. [] when no row passes
  the filter.
#}
{% macro scoring_ordered_list(value, filter=none) -%}
    coalesce(
        list_transform(
            list_sort(list({'pos': pos, 'value': {{ value }}}){% if filter %} filter (where {{ filter }}){% endif %}),
            lambda entry: entry.value
        ),
        []
    )
{%- endmacro %}


{#
  Each element of a list as Python's str.strip() leaves it: the list itself when no element
  holds a character str.isspace() is true for (one regex over the joined text, where a lambda
  per element costs far more over a million lists).
#}
{% macro scoring_stripped(list) -%}
    case
        when regexp_matches(
            array_to_string({{ list }}, ''),
            '{{ python_whitespace_class() }}'
        ) then list_transform({{ list }}, lambda a: {{ scoring_python_strip('a') }})
        else {{ list }}
    end
{%- endmacro %}

{# The first occurrence of each element, in list order (the list itself when no element repeats). #}
{% macro scoring_first_occurrences(list) -%}
    case
        when list_unique({{ list }}) = len({{ list }}) then {{ list }}
        else list_filter({{ list }}, lambda a, i: list_position({{ list }}, a) = i)
    end
{%- endmacro %}


{#
  Maps one rule's answer list of retrieval rows to pids, element by element.
  loft: the key is the answer text exactly as upstream looks it up (str(answer)); order and
  duplicates are kept. strict: the key is stripped (Python's str.strip()) and only its first
  occurrence is kept.
  Shown IDs map through prompt_doc_ids of the row's variant; imported pids are checked
  against the corpus.
#}
{% macro scoring_mapped_ids(answers_relation, answer_column, strict, prompt_doc_ids, corpus) %}
select
    items.row_id,
    items.pos,
    items.item,
    coalesce(doc_ids.pid, items.pid_lookup) as pid,
    coalesce(doc_ids.pid, corpus.pid) is not null as is_known
from (
    select
        *,
        case when id_space = 'shown' then item end as shown_lookup,
        case when id_space = 'pid' then {{ scoring_python_strip('item') }} end as pid_lookup
    from (
        select
            row_id,
            id_space,
            task,
            dataset,
            corpus_id,
            variant,
            pos,
            ids[pos] as item
        from (
            select *, generate_subscripts(ids, 1) as pos
            from (
                select
                    *,
                    {% if strict -%}
                    {{ scoring_first_occurrences('stripped') }}
                    {%- else -%}
                    {{ answer_column }}
                    {%- endif %} as ids
                from (
                    select
                        *{% if strict %},
                        {{ scoring_stripped(answer_column) }} as stripped
                        {%- endif %}
                    from {{ answers_relation }}
                )
            )
        )
    )
) as items
left join {{ prompt_doc_ids }} as doc_ids
    on doc_ids.task = items.task
    and doc_ids.dataset = items.dataset
    and doc_ids.corpus_id = items.corpus_id
    and doc_ids.variant = items.variant
    and doc_ids.shown_id = items.shown_lookup
left join (select distinct task, dataset, corpus_id, pid from {{ corpus }}) as corpus
    on corpus.task = items.task
    and corpus.dataset = items.dataset
    and corpus.corpus_id = items.corpus_id
    and corpus.pid = items.pid_lookup
{% endmacro %}


{#
  Each owed answer's generation parsed under both rules. The parse functions run in Python and
  a view could evaluate them once per use of each struct field, so its one reader, the
  predictions model, reads it into a materialized CTE. Only answered rows (status ok) with a
  generation are parsed.
#}
{% macro scoring_parsed_answers(rows=none) %}
{%- set rows = rows or loft_view_ref('int_prediction_rows') -%}
select
    *,
    case when status = 'ok' and given_answers is null
        then loft_parse_response(raw_text, 'loft', task, method, stage, payload) end as parsed_loft,
    case when status = 'ok' and given_answers is null
        then loft_parse_response(raw_text, 'strict', task, method, stage, payload) end as parsed_strict
from {{ rows }}
{% endmacro %}


{#
  The predictions, as int_predictions stores them: raw text, answers under parse_loft and
  parse_strict with their parse status, and for retrieval the predicted pids.
  - A list or JSON the loft rule already holds is stored once: answer_strict(_json) is NULL where
    it equals answer_loft(_json), pred_pids_loft where it equals answer_loft, pred_pids_strict
    where it equals pred_pids_loft (none of them is NULL otherwise for the rows that have them).
    The predictions view (scoring_predictions_view) gives every column back.
  - Rows whose status is not 'ok' (blocked, error, skipped, missing) get empty answers and
    parse status 'not_answered'; imported answer lists get parse status 'given'.
  - pred_pids_loft: upstream drops a whole query when any turn names an ID that is not in
    the corpus (query_dropped_loft); the list is then empty. Imported pids are stripped
    (str(x).strip()), as upstream does, and never dropped.
  - pred_pids_strict: de-duplicated in model order; an unknown ID keeps its rank as NULL and
    is listed in unknown_ids.
#}
{% macro scoring_predictions(parsed=none, prompt_doc_ids=none, corpus=none) %}
{%- set parsed = parsed or loft_ref('int_parsed_answers') -%}
{%- set prompt_doc_ids = prompt_doc_ids or loft_ref('prompt_doc_ids') -%}
{%- set corpus = corpus or loft_ref('corpus') -%}
with

{#- Materialized: each row's Python parse (int_parsed_answers is a view) runs once. #}
parsed as materialized (
    select
        *,
        row_number() over () as row_id,
        status = 'ok' as is_answered
    from {{ parsed }}
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
    select * from answers where task = 'retrieval'
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
    where task <> 'retrieval'
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
        answers.import_line
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
{% endmacro %}


{#
  predictions: int_predictions with the lists it stores once given back to every column.
  pred_pids_* exist for retrieval rows only (NULL otherwise).
#}
{% macro scoring_predictions_view(stored=none) %}
{%- set stored = stored or loft_view_ref('int_predictions') -%}
with

stored as (
    select * from {{ stored }}
),

loft_pids as (
    select
        * replace (case when task = 'retrieval' then coalesce(pred_pids_loft, answer_loft) end as pred_pids_loft)
    from stored
),

final as (
    select
        * replace (
            coalesce(answer_strict, answer_loft) as answer_strict,
            coalesce(answer_strict_json, answer_loft_json) as answer_strict_json,
            case when task = 'retrieval' then coalesce(pred_pids_strict, pred_pids_loft) end as pred_pids_strict
        )
    from loft_pids
)

select * from final
{% endmacro %}
