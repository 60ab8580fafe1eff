{#
  int_answer_health: one row per run (source, system, method, task, dataset, variant, split):
  how many of its calls (prediction rows of every stage whose request was made: status ok,
  blocked or error) came back with no usable answer, by class, and the generation budget it was
  sent with. empty: answered with no text; truncated: stopped at the output limit (finish reason
  MAX_TOKENS, length or max_tokens), with or without text (a cut with no text is an error row);
  blocked: a safety block, content filter or refusal; unparsable: answered with text LOFT's parser
  reads nothing from (no list, not a literal; JSON stages: no JSON, invalid, off the schema).
  A run is flagged when any share is above var answer_health_threshold (default 0.05).
#}
{%- set threshold = config.get('loft')['answer_health_threshold'] -%}
with

predictions as (
    select source, system, method, task, dataset, variant, split, prompt_id, status, finish_reason,
           parse_status_loft
    from {{ view_ref('loft_128k__int_predictions') }}
),

responses as (
    select system, prompt_id, error, max_output_tokens, thinking
    from {{ view_ref('loft_128k__responses') }}
    where not is_stale
),

calls as (
    select
        predictions.*,
        responses.max_output_tokens,
        responses.thinking,
        predictions.status = 'ok' and predictions.parse_status_loft = 'no_text' as is_empty,
        coalesce(predictions.finish_reason in ('MAX_TOKENS', 'length', 'max_tokens'), false)
            or (predictions.status = 'error' and coalesce(responses.error like 'truncated completion%', false))
            as is_truncated,
        predictions.status = 'blocked' as is_blocked,
        predictions.status = 'ok'
            and predictions.parse_status_loft in ('no_list', 'unparsable', 'no_json', 'invalid_json', 'schema_violation')
            as is_unparsable
    from predictions
    left join responses using (system, prompt_id)
    where predictions.status in ('ok', 'blocked', 'error')
),

counted as (
    select
        source, system, method, task, dataset, variant, split,
        count(*) as n_calls,
        count(*) filter (where is_empty) as n_empty,
        count(*) filter (where is_truncated) as n_truncated,
        count(*) filter (where is_blocked) as n_blocked,
        count(*) filter (where is_unparsable) as n_unparsable,
        count(*) filter (where is_empty or is_truncated or is_blocked or is_unparsable) as n_no_answer,
        max(max_output_tokens) as max_output_tokens,
        max(thinking) as thinking
    from calls
    group by all
),

final as (
    select
        source, system, method, task, dataset, variant, split,
        max_output_tokens,
        thinking,
        n_calls,
        n_empty / n_calls as empty_share,
        n_truncated / n_calls as truncated_share,
        n_blocked / n_calls as blocked_share,
        n_unparsable / n_calls as unparsable_share,
        n_no_answer / n_calls as no_answer_share,
        greatest(n_empty, n_truncated, n_blocked, n_unparsable) / n_calls > cast('{{ threshold }}' as double) as is_health_flagged
    from counted
)

select * from final
