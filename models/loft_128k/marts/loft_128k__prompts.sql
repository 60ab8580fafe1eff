{#
  The prompts table of a size: the rendered rows (int_prompt_rows, Python) with the context-fit
  flags. context_window_fits maps each model of the seed table model_context_windows to whether
  the whole prompt (n_tokens_total, SentencePiece count) fits its window: rows that do not fit
  must be skipped, never sent truncated.
#}
with

prompt_rows as (select * from {{ ref('loft_128k__int_prompt_rows') }}),
windows as (select * from {{ source('reference', 'model_context_windows') }}),
arms as (select task, dataset, variant, method, arm_id from {{ ref('loft_128k__arms') }}),

fits as (
    select
        prompt_rows.prompt_id,
        map(
            list(windows.model::varchar order by windows.model),
            list(prompt_rows.n_tokens_total <= windows.context_window order by windows.model)
        ) as context_window_fits
    from prompt_rows
    cross join windows
    group by prompt_rows.prompt_id
),

final as (
    select
        prompt_rows.prompt_id::varchar as prompt_id,
        prompt_rows.task::varchar as task,
        prompt_rows.dataset::varchar as dataset,
        prompt_rows.corpus_id::varchar as corpus_id,
        prompt_rows.variant::varchar as variant,
        prompt_rows.method::varchar as method,
        prompt_rows.stage::bigint as stage,
        prompt_rows.split::varchar as split,
        prompt_rows.qid::varchar as qid,
        prompt_rows.turn::bigint as turn,
        prompt_rows.call_index::bigint as call_index,
        prompt_rows.n_turns::bigint as n_turns,
        prompt_rows.prefix_id::varchar as prefix_id,
        prompt_rows.head::varchar as head,
        prompt_rows.segment_ids::varchar[] as segment_ids,
        prompt_rows.suffix::varchar as suffix,
        prompt_rows.n_tokens_prefix::bigint as n_tokens_prefix,
        prompt_rows.n_tokens_total::bigint as n_tokens_total,
        prompt_rows.gold::varchar as gold,
        prompt_rows.gold_shown_ids::varchar as gold_shown_ids,
        prompt_rows.targets::varchar as targets,
        prompt_rows.gold_positions::bigint[] as gold_positions,
        prompt_rows.gold_depth::double as gold_depth,
        prompt_rows.gold_token_offset::bigint as gold_token_offset,
        prompt_rows.n_documents::bigint as n_documents,
        prompt_rows.payload::varchar as payload,
        coalesce(fits.context_window_fits, map())::map(varchar, boolean) as context_window_fits,
        arms.arm_id::varchar as arm_id,
        prompt_rows.build_id::varchar as build_id,
        {{ loft_prompt_digest('prompt_rows') }} as prompt_digest
    from prompt_rows
    left join fits using (prompt_id)
    left join arms using (task, dataset, variant, method)
)

select * from final
