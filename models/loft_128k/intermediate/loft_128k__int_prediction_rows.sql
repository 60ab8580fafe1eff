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
{%- set responses = '(select * from ' ~ view_ref('loft_128k__responses') ~ ' where not is_stale)' -%}

{%- set stage_prompts = '(select * from ' ~ view_ref('loft_128k__int_stage2_prompts')
    ~ ' union all by name select * from ' ~ view_ref('loft_128k__int_stage3_prompts') ~ ')' -%}
{%- set stage_answers = '(select * from ' ~ view_ref('loft_128k__int_stage1_answers')
    ~ ' union all by name select * from ' ~ view_ref('loft_128k__int_stage2_answers') ~ ')' -%}

with

runs as ({{ scoring_run_limits(responses) }}),

{#- Seeded order, as inference.warehouse.first_queries picks a quick try's queries; only the
    datasets runs answer (not, say, a million imported queries no response owes). #}
ranked_queries as (
    select distinct
        task, dataset, split, qid,
        dense_rank() over (partition by task, dataset, split order by query_rank, qid) as position
    from {{ view_ref('loft_128k__int_scored_queries') }}
    semi join (select distinct task, dataset, split from runs) using (task, dataset, split)
    where split in ('dev', 'test')
),

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
    from {{ view_ref('loft_128k__prompts') }} as prompts
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
    from {{ view_ref('loft_128k__int_imported_predictions') }}
)

select * from final_inference
union all by name
select * from imported
