{# Every stage's responses as one table (stage s: int_stage{s}_responses). A response whose
   stage-1 prompt has changed since it was answered (or is gone) is stale: kept, never scored.
   Placeholders of requests never sent (skipped_*) are written last, so a plain look shows answers. #}
with

stage_1 as (select * from {{ ref('loft_128k__int_stage1_responses') }}),
stage_2 as (select * from {{ ref('loft_128k__int_stage2_responses') }}),
stage_3 as (select * from {{ ref('loft_128k__int_stage3_responses') }}),
arms as (select task, dataset, variant, method, arm_id from {{ ref('loft_128k__arms') }}),
prompts as (select prompt_id, prompt_digest, n_tokens_total from {{ ref('loft_128k__prompts') }}),

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
        prompts.n_tokens_total::bigint as sentencepiece_prompt_tokens,
        cached_tokens::bigint as cached_tokens,
        cache_write_tokens::bigint as cache_write_tokens,
        output_tokens::bigint as output_tokens,
        thinking_tokens::bigint as thinking_tokens,
        max_output_tokens::bigint as max_output_tokens,
        thinking::varchar as thinking,
        thought_text::varchar as thought_text,
        latency_s::double as latency_s,
        ttft_s::double as ttft_s,
        attempts::bigint as attempts,
        error::varchar as error,
        cost_usd::double as cost_usd,
        batch_id::varchar as batch_id,
        created_at::timestamptz as created_at,
        query_limit::bigint as query_limit,
        arms.arm_id::varchar as arm_id,
        combined.prompt_digest::varchar as prompt_digest
    from combined
    left join arms using (task, dataset, variant, method)
    left join prompts using (prompt_id)
),

stale_stage_1 as (
    select distinct responses.system, responses.task, responses.dataset, responses.variant, responses.method,
                    responses.split, responses.qid
    from final as responses
    left join prompts using (prompt_id)
    where responses.stage = 1
      and (prompts.prompt_id is null
           or (responses.prompt_digest is not null and responses.prompt_digest <> prompts.prompt_digest))
),

marked as (
    select
        final.*,
        stale.qid is not null as is_stale
    from final
    left join stale_stage_1 as stale using (system, task, dataset, variant, method, split, qid)
)

select * from marked
order by status like 'skipped%'
