{#
  Multi-stage methods (python/loft_warehouse/methods/catalogue.py): a stage's answers, parsed
  for the next stage, and the responses of every stage as one table.
#}

{#
  The responses of one stage of the methods that have a later stage, each read under both rules
  by its stage's parser (loft_parse_response: answer lists, QUEST-LOFT JSON), with the parse
  status and detail, and the payload the next stage builds from (justified: each candidate
  with the IDs it cites). Rows that were not answered (status not ok) are kept, unparsed.
#}
{% macro method_stage_answers(stage, stage_responses, stage_prompts) %}
with

{#- Stage 1's prompts are every system's; a later stage's are built from each system's own answers. #}
{%- set prompt_key = 'prompt_id' if stage == 1 else 'system, prompt_id' %}
responses as (select * from {{ stage_responses }}),
prompts as (select {{ prompt_key }}, payload from {{ stage_prompts }}),

chained as (
    select responses.*, prompts.payload as prompt_payload
    from responses
    left join prompts using ({{ prompt_key }})
    where responses.stage = {{ stage }} and loft_method_stages(responses.method) > {{ stage }}
),

parsed as (
    select
        *,
        case when status = 'ok' then loft_parse_response(raw_text, 'loft', task, method, stage, prompt_payload) end
            as parsed_loft,
        case when status = 'ok' then loft_parse_response(raw_text, 'strict', task, method, stage, prompt_payload) end
            as parsed_strict
    from chained
),

final as (
    select
        system,
        prompt_id,
        task,
        dataset,
        corpus_id,
        variant,
        method,
        stage,
        split,
        qid,
        turn,
        call_index,
        status,
        raw_text,
        parsed_loft.answers as answers_loft,
        parsed_loft.status as parse_status_loft,
        parsed_loft.payload as payload_loft,
        parsed_strict.answers as answers_strict,
        parsed_strict.status as parse_status_strict,
        parsed_strict.detail as parse_detail_strict,
        parsed_strict.payload as payload_strict
    from parsed
)

select * from final
{% endmacro %}


