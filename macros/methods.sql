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
{% macro method_stage_answers(stage) %}
with

responses as (select * from {{ loft_ref('int_stage' ~ stage ~ '_responses') }}),
prompts as (select prompt_id, payload from {{ loft_ref('prompts' if stage == 1 else 'int_stage' ~ stage ~ '_prompts') }}),

chained as (
    select responses.*, prompts.payload as prompt_payload
    from responses
    left join prompts using (prompt_id)
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


{# Every stage's responses as one table (stage s: int_stage{s}_responses). #}
{% macro inference_responses() %}
with

stage_1 as (select * from {{ loft_ref('int_stage1_responses') }}),
stage_2 as (select * from {{ loft_ref('int_stage2_responses') }}),
stage_3 as (select * from {{ loft_ref('int_stage3_responses') }}),
arms as (select task, dataset, variant, method, arm_id from {{ loft_ref('arms') }}),

combined as (
    select * from stage_1
    union all by name
    select * from stage_2
    union all by name
    select * from stage_3
),

final as (
    select
        source::varchar as source,
        system::varchar as system,
        prompt_id::varchar as prompt_id,
        task::varchar as task,
        dataset::varchar as dataset,
        corpus_id::varchar as corpus_id,
        variant::varchar as variant,
        method::varchar as method,
        stage::bigint as stage,
        split::varchar as split,
        qid::varchar as qid,
        turn::bigint as turn,
        call_index::bigint as call_index,
        request_key::varchar as request_key,
        status::varchar as status,
        raw_text::varchar as raw_text,
        finish_reason::varchar as finish_reason,
        input_tokens::bigint as input_tokens,
        cached_tokens::bigint as cached_tokens,
        cache_write_tokens::bigint as cache_write_tokens,
        output_tokens::bigint as output_tokens,
        latency_s::double as latency_s,
        ttft_s::double as ttft_s,
        attempts::bigint as attempts,
        error::varchar as error,
        cost_usd::double as cost_usd,
        batch_id::varchar as batch_id,
        created_at::timestamptz as created_at,
        query_limit::bigint as query_limit,
        arms.arm_id::varchar as arm_id
    from combined
    left join arms using (task, dataset, variant, method)
)

select * from final
{% endmacro %}
