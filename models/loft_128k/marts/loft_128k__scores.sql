{#
  The scores analysts query: one row per (source, system, dataset, variant, query, turn, grain,
  metric, rule, gold_version), int_turn_scores with its metric lists unnested.
#}
with

turn_scores as (
    select * from {{ view_ref('loft_128k__int_turn_scores') }}
),

final as (
    select
        size,
        source,
        system,
        method,
        stage,
        task,
        dataset,
        corpus_id,
        variant,
        split,
        qid,
        turn,
        n_turns,
        grain,
        gold_version,
        score.metric::varchar as metric,
        score.rule::varchar as rule,
        score.metric::varchar || '_' || score.rule::varchar as metric_name,
        score.value,
        status,
        is_answered,
        score.is_empty_answer,
        score.is_primary,
        gold_positions,
        gold_depth,
        gold_token_offset,
        n_documents,
        arm_id,
        query_limit
    from turn_scores, unnest(turn_scores.metric_values) as scored(score)
)

select * from final
