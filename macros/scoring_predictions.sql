{#
  Predictions: every answer a system owes, parsed under both rules, retrieval IDs mapped to pids.

  Relations are arguments so the SQL can be rendered and tested outside dbt; in a model the
  defaults point at the same-size siblings. The loft_parse_* functions come from the dbt-duckdb
  plugin loft_warehouse.scoring.dbt_plugin.
#}

{#
  One row per (system, prompt) of every run, plus imported predictions. A run is a (system,
  task, dataset, variant, split) with at least one response; a prompt of a run without a
  response is kept with status 'missing' so that it scores 0 instead of vanishing.
#}
{% macro scoring_prediction_rows(responses=none, prompts=none, imports=none) %}
{%- set responses = responses or loft_ref('responses') -%}
{%- set prompts = prompts or loft_ref('prompts') -%}
{%- set imports = imports or loft_ref('int_imported_predictions') -%}
with

runs as (
    select distinct system, task, dataset, variant, split
    from {{ responses }}
),

inference as (
    select
        'inference' as source,
        runs.system,
        prompts.prompt_id,
        prompts.task,
        prompts.dataset,
        prompts.corpus_id,
        prompts.variant,
        prompts.split,
        prompts.qid,
        prompts.turn,
        prompts.n_turns,
        coalesce(responses.status, 'missing') as status,
        responses.raw_text,
        responses.finish_reason,
        null::varchar[] as given_answers,
        null::varchar as given_answers_json,
        'shown' as id_space,
        null::varchar as import_file,
        null::bigint as import_line
    from {{ prompts }} as prompts
    inner join runs using (task, dataset, variant, split)
    left join {{ responses }} as responses
        on responses.system = runs.system
        and responses.prompt_id = prompts.prompt_id
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
        split,
        qid,
        turn,
        n_turns,
        status,
        raw_text,
        null::varchar as finish_reason,
        given_answers,
        given_answers_json,
        id_space,
        import_file,
        import_line
    from {{ imports }}
)

select * from inference
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
  Maps one rule's answer list of retrieval rows to pids, element by element.
  loft: the key is the answer text exactly as upstream looks it up (str(answer)); order and
  duplicates are kept. strict: the key is trimmed and only its first occurrence is kept.
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
        case when id_space = 'pid' then trim(item) end as pid_lookup
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
                    list_filter(
                        list_transform({{ answer_column }}, lambda a: trim(a)),
                        lambda a, i: list_position(list_transform({{ answer_column }}, lambda b: trim(b)), a) = i
                    )
                    {%- else -%}
                    {{ answer_column }}
                    {%- endif %} as ids
                from {{ answers_relation }}
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
  Each owed answer's generation parsed under both rules, once: the parse functions run in
  Python, so this is a table of its own (a view or CTE could evaluate them once per use of
  each struct field). Only answered rows (status ok) with a generation are parsed.
#}
{% macro scoring_parsed_answers(rows=none) %}
{%- set rows = rows or loft_ref('int_prediction_rows') -%}
select
    *,
    case when status = 'ok' and given_answers is null then loft_parse_loft(raw_text) end as parsed_loft,
    case when status = 'ok' and given_answers is null then loft_parse_strict(raw_text, task) end as parsed_strict
from {{ rows }}
{% endmacro %}


{#
  The predictions table: raw text, answers under parse_loft and parse_strict with their parse
  status, and for retrieval the predicted pids.
  - Rows whose status is not 'ok' (blocked, error, skipped, missing) get empty answers and
    parse status 'not_answered'; imported answer lists get parse status 'given'.
  - pred_pids_loft: upstream drops a whole query when any turn names an ID that is not in
    the corpus (query_dropped_loft); the list is then empty. Imported pids are trimmed, as
    upstream does, and never dropped.
  - pred_pids_strict: de-duplicated in model order; an unknown ID keeps its rank as NULL and
    is listed in unknown_ids.
#}
{% macro scoring_predictions(parsed=none, prompt_doc_ids=none, corpus=none) %}
{%- set parsed = parsed or loft_ref('int_parsed_answers') -%}
{%- set prompt_doc_ids = prompt_doc_ids or loft_ref('prompt_doc_ids') -%}
{%- set corpus = corpus or loft_ref('corpus') -%}
with

parsed as (
    select
        *,
        row_number() over () as row_id,
        status = 'ok' as is_answered
    from {{ parsed }}
),

answers as (
    select
        * exclude (parsed_loft, parsed_strict, given_answers, given_answers_json),
        case
            when not is_answered then []::varchar[]
            when given_answers is not null then given_answers
            else parsed_loft.answers
        end as answer_loft,
        case
            when not is_answered then '[]'
            when given_answers is not null then given_answers_json
            else parsed_loft.answers_json
        end as answer_loft_json,
        case
            when not is_answered then 'not_answered'
            when given_answers is not null then 'given'
            else parsed_loft.status
        end as parse_status_loft,
        case
            when not is_answered then []::varchar[]
            when given_answers is not null then given_answers
            else parsed_strict.answers
        end as answer_strict,
        case
            when not is_answered then '[]'
            when given_answers is not null then given_answers_json
            else parsed_strict.answers_json
        end as answer_strict_json,
        case
            when not is_answered then 'not_answered'
            when given_answers is not null then 'given'
            else parsed_strict.status
        end as parse_status_strict
    from parsed
),

retrieval as (
    select * from answers where task = 'retrieval'
),

loft_items as (
    {{ scoring_mapped_ids('retrieval', 'answer_loft', false, prompt_doc_ids, corpus) }}
),

strict_items as (
    {{ scoring_mapped_ids('retrieval', 'answer_strict', true, prompt_doc_ids, corpus) }}
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

retrieval_ids as (
    select
        retrieval.row_id,
        coalesce(loft_lists.pids, []) as pids_loft,
        coalesce(loft_lists.unknown_ids, []) as unknown_ids_loft,
        bool_or(retrieval.id_space = 'shown' and len(coalesce(loft_lists.unknown_ids, [])) > 0)
            over (partition by retrieval.source, retrieval.system, retrieval.variant,
                               retrieval.task, retrieval.dataset, retrieval.qid) as query_dropped_loft,
        coalesce(strict_lists.pids, []) as pids_strict,
        coalesce(strict_lists.unknown_ids, []) as unknown_ids_strict
    from retrieval
    left join loft_lists using (row_id)
    left join strict_lists using (row_id)
)

select
    answers.source,
    answers.system,
    answers.prompt_id,
    answers.task,
    answers.dataset,
    answers.corpus_id,
    answers.variant,
    answers.split,
    answers.qid,
    answers.turn,
    answers.n_turns,
    answers.status,
    answers.is_answered,
    answers.raw_text,
    answers.finish_reason,
    answers.answer_loft,
    answers.answer_loft_json,
    answers.parse_status_loft,
    answers.answer_strict,
    answers.answer_strict_json,
    answers.parse_status_strict,
    answers.id_space,
    case when retrieval_ids.query_dropped_loft then []::varchar[] else retrieval_ids.pids_loft end
        as pred_pids_loft,
    retrieval_ids.pids_strict as pred_pids_strict,
    retrieval_ids.unknown_ids_loft,
    retrieval_ids.unknown_ids_strict,
    retrieval_ids.query_dropped_loft,
    answers.import_file,
    answers.import_line
from answers
left join retrieval_ids using (row_id)
{% endmacro %}
