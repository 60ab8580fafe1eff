{{ config(materialized='view') }}
{# Whole prompt texts, assembled on read (a view: nothing is stored twice). #}
with

segment_texts as (
    select
        prompts.prompt_id,
        string_agg(segments.text, '' order by parts.position) as text
    from {{ view_ref('loft_128k__prompts') }} as prompts,
        unnest(prompts.segment_ids) with ordinality as parts(segment_id, position)
    inner join {{ view_ref('loft_128k__prompt_segments') }} as segments using (segment_id)
    group by prompts.prompt_id
)

select
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
    prompts.head || prefixes.text || coalesce(segment_texts.text, '') || prompts.suffix as prompt,
    prompts.n_tokens_total,
    prompts.targets
from {{ view_ref('loft_128k__prompts') }} as prompts
inner join {{ view_ref('loft_128k__prompt_prefixes') }} as prefixes using (prefix_id)
left join segment_texts using (prompt_id)
