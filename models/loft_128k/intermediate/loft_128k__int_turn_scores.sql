{#
  The scored turns: one row per (source, system, dataset, variant, query, turn, grain) and
  family (an adjudicated query's revised-gold metrics are a further row per gold version, and
  gold_version says which; every other row is the release gold), its metrics a list of
  (metric, rule, value, is_empty_answer, is_primary). Rows that were not
  answered (status not 'ok': blocked, error, skipped_*, missing) score 0 and stay; is_answered
  and status say why. A multi-turn query with no answer at all (every turn missing) keeps its
  loft-rule metrics on its first turn only, as LOFT's evaluator scores an unanswered query as
  one turn; the other rules keep every turn. Stored this way, a million turns write a million
  rows, not one per metric (the scores view unnests them). Incremental by run, as
  int_predictions: a build scores only the runs whose scores_fingerprint (int_run_fingerprints)
  is not yet stored as a run_fingerprint, and drops the rows of runs whose fingerprint is gone.
#}
{{ config(
    materialized='incremental',
    incremental_strategy='append',
    on_schema_change='append_new_columns',
    post_hook="{{ incremental_drop_stale_runs(ref('loft_128k__int_run_fingerprints'), 'scores_fingerprint') }}"
) }}
{%- set predictions = ref('loft_128k__predictions') -%}
{%- set queries = ref('loft_128k__int_scored_queries') -%}

{%- set adjudications = view_ref('loft_128k__stg_gold_adjudications') -%}

{%- set responses = '(select * from ' ~ view_ref('loft_128k__responses') ~ ' where not is_stale)' -%}
{%- set size = config.get('loft_size') -%}
with

runs as ({{ incremental_runs_to_compute(ref('loft_128k__int_run_fingerprints'), 'scores_fingerprint') }}),

run_predictions as (
    select * from {{ predictions }} semi join runs using (source, system, method, task, dataset, variant, split)
),

{#- Not materialized: each family's read filters the predictions' scan by task, where
    materializing wrote every final prediction (raw text and lists included) once more first. #}
final_predictions as not materialized ({{ scoring_final_predictions('run_predictions') }}),
retrieval as ({{ scoring_retrieval_scores('final_predictions', queries) }}),
rag_single as ({{ scoring_rag_single_scores('final_predictions', queries) }}),
rag_multi as ({{ scoring_rag_multi_scores('final_predictions', queries) }}),
icl as ({{ scoring_icl_scores('final_predictions', queries) }}),
sql_exec as ({{ scoring_sql_scores('final_predictions', queries) }}),
key_value as ({{ scoring_key_value_scores('final_predictions', queries) }}),
adjudicated as ({{ scoring_adjudicated_scores('final_predictions', queries, adjudications) }}),

all_scores as (
    select *, 'turn' as grain from retrieval
    union all by name
    select *, 'turn' as grain from rag_single
    union all by name
    select *, 'turn' as grain from rag_multi
    union all by name
    select *, 'turn' as grain from icl
    union all by name
    select * from sql_exec
    union all by name
    select *, 'turn' as grain from key_value
    union all by name
    select *, 'turn' as grain from adjudicated
),

{#- Only conversations with a later turn can qualify: a run of single-turn queries groups nothing. #}
later_turns as materialized (
    select distinct source, system, method, task, dataset, variant, split, qid
    from final_predictions
    where turn > 0
),

unanswered_conversations as (
    select source, system, method, task, dataset, variant, split, qid
    from final_predictions
    semi join later_turns using (source, system, method, task, dataset, variant, split, qid)
    group by all
    having bool_and(status = 'missing')
),

kept_scores as (
    select
        all_scores.* replace (
            case when unanswered.qid is not null and all_scores.grain = 'turn' and all_scores.turn > 0
                 then list_filter(all_scores.metric_values, lambda m: m.rule <> 'loft')
                 else all_scores.metric_values end as metric_values
        ),
        {{ scoring_primary_metric('all_scores.task', 'all_scores.dataset', 'datasets.max_gold') }} as primary_metric,
        {{ scoring_primary_rule('all_scores.task') }} as primary_rule
    from all_scores
    left join unanswered_conversations as unanswered
        using (source, system, method, task, dataset, variant, split, qid)
    left join {{ ref('loft_128k__stg_datasets') }} as datasets using (task, dataset)
),

{#- Where the gold sat in the query's (first-stage) prompt: position data for every score. #}
positions as (
    select task, dataset, corpus_id, variant, method, qid, turn, gold_positions, gold_depth, gold_token_offset, n_documents
    from {{ ref('loft_128k__prompts') }}
    where stage = 1 and call_index = 0
),

run_limits as ({{ scoring_run_limits(responses) }}),

scored as (
    select
        '{{ size }}' as size,
        kept.source,
        kept.system,
        kept.method,
        kept.stage,
        kept.task,
        kept.dataset,
        kept.corpus_id,
        kept.variant,
        kept.split,
        kept.qid,
        kept.turn,
        kept.n_turns,
        kept.grain,
        coalesce(kept.gold_version, '{{ scoring_release_gold() }}') as gold_version,
        kept.status,
        kept.is_answered,
        positions.gold_positions,
        positions.gold_depth,
        positions.gold_token_offset,
        positions.n_documents,
        arms.arm_id,
        run_limits.query_limit,
        list_transform(kept.metric_values, lambda m: {
            'metric': m.metric::{{ scoring_metric_type() }},
            'rule': m.rule::{{ scoring_rule_type() }},
            'value': case when kept.is_answered then m.value::double else 0.0 end,
            'is_empty_answer': coalesce(m.is_empty, false),
            'is_primary': coalesce(
                m.metric = kept.primary_metric and m.rule = kept.primary_rule and kept.grain = 'turn', false
            )
        }) as metric_values,
        runs.run_fingerprint
    from kept_scores as kept
    inner join runs using (source, system, method, task, dataset, variant, split)
    left join positions using (task, dataset, corpus_id, variant, method, qid, turn)
    left join {{ ref('loft_128k__arms') }} as arms
        on arms.task = kept.task and arms.dataset = kept.dataset and arms.variant = kept.variant
        and arms.method = kept.method
    left join run_limits
        on run_limits.source = kept.source and run_limits.system = kept.system and run_limits.task = kept.task
        and run_limits.dataset = kept.dataset and run_limits.variant = kept.variant
        and run_limits.method = kept.method and run_limits.split = kept.split
    where len(kept.metric_values) > 0
),

{#- The turn's primary metric as plain columns: the marts that read only primary turn scores
    (scaling_scores, sizes, paired_comparisons, error_attribution, cost_ledger) then skip
    unnesting the list. #}
primary_scores as (
    select *, list_filter(metric_values, lambda m: m.is_primary)[1] as primary_score from scored
),

final as (
    select
        * exclude (primary_score),
        primary_score.metric::varchar || '_' || primary_score.rule::varchar as primary_metric_name,
        primary_score.rule::varchar as primary_rule,
        primary_score.value as primary_value
    from primary_scores
)

select * from final
