{#
  One row per run (source, system, method, task, dataset, variant, split) with digests of what
  its stored rows depend on: predictions_fingerprint (the run's owed rows, its dataset's shown
  IDs and corpus titles, the scoring code), scores_fingerprint (that, and its dataset's gold,
  adjudications, settings, gold positions and arms, and the run's query limit),
  aggregates_fingerprint (that, and the build's seed and its dataset's prompt variants: what
  the run's means depend on), and curves_fingerprint (the aggregates_fingerprint of every variant
  of the run's system, method, dataset and split: a position curve pools them). The incremental models (int_predictions,
  int_turn_scores, int_metrics, int_position_curves) compute a run again only when its digest is
  not among the ones they hold, and drop rows whose digest is no longer here.
#}
with

{#- An import's rows are those of its landed files: their fingerprints and the row count stand for
    the rows (int_imported_predictions reads a file again whenever its fingerprint changes). #}
run_rows as (
    select source, system, method, task, dataset, variant, split, loft_rows_digest(r) as digest
    from {{ view_ref('loft_128k__int_prediction_rows') }} as r
    where source <> 'import'
    group by all
    union all
    select
        'import' as source, system, method, task, dataset, variant, split,
        {{ incremental_landed_digest('landed_fingerprint') }} as digest
    from {{ view_ref('loft_128k__int_imported_predictions') }}
    group by all
),

doc_ids as (
    select task, dataset, loft_rows_digest(r) as digest
    from {{ ref('loft_128k__prompt_doc_ids') }} as r
    group by all
),

titles as (
    select task, dataset, loft_rows_digest(r) as digest
    from (select distinct task, dataset, corpus_id, pid, title from {{ ref('loft_128k__corpus') }}) as r
    group by all
),

{#- An answer file's queries likewise stand as their landed file's fingerprint. #}
gold as (
    select task, dataset, loft_rows_digest(r) as digest
    from {{ view_ref('loft_128k__int_scored_queries') }} as r
    where landed_fingerprint is null
    group by all
    union all
    select
        task, dataset,
        {{ incremental_landed_digest('landed_fingerprint') }} as digest
    from {{ view_ref('loft_128k__int_scored_queries') }}
    where landed_fingerprint is not null
    group by all
),

adjudications as (
    select task, dataset, loft_rows_digest(r) as digest
    from {{ view_ref('loft_128k__stg_gold_adjudications') }} as r
    group by all
),

dataset_settings as (
    select task, dataset, loft_rows_digest(r) as digest
    from {{ ref('loft_128k__stg_datasets') }} as r
    group by all
),

positions as (
    select task, dataset, loft_rows_digest(r) as digest
    from (
        select task, dataset, corpus_id, variant, method, qid, turn, gold_positions, gold_depth, gold_token_offset,
               n_documents
        from {{ ref('loft_128k__prompts') }}
        where stage = 1 and call_index = 0
    ) as r
    group by all
),

arms as (
    select task, dataset, loft_rows_digest(r) as digest
    from {{ ref('loft_128k__arms') }} as r
    group by all
),

variants as (
    select task, dataset, loft_rows_digest(r) as digest
    from {{ ref('loft_128k__prompt_variants') }} as r
    group by all
),

run_limits as (
    select source, system, method, task, dataset, variant, split, query_limit
    from ({{ scoring_run_limits('(select * from ' ~ view_ref('loft_128k__responses') ~ ' where not is_stale)') }})
),

predictions_inputs as (
    select
        run_rows.*,
        md5(to_json([source, system, method, task, dataset, variant, split, run_rows.digest, doc_ids.digest,
                     titles.digest, loft_scoring_code_version()])::varchar) as predictions_fingerprint
    from run_rows
    left join doc_ids using (task, dataset)
    left join titles using (task, dataset)
),

scores_inputs as (
    select
        inputs.source,
        inputs.system,
        inputs.method,
        inputs.task,
        inputs.dataset,
        inputs.variant,
        inputs.split,
        inputs.predictions_fingerprint,
        md5(to_json([inputs.predictions_fingerprint, gold.digest, adjudications.digest, dataset_settings.digest,
                     positions.digest, arms.digest, run_limits.query_limit::varchar])::varchar) as scores_fingerprint
    from predictions_inputs as inputs
    left join gold using (task, dataset)
    left join adjudications using (task, dataset)
    left join dataset_settings using (task, dataset)
    left join positions using (task, dataset)
    left join arms using (task, dataset)
    left join run_limits using (source, system, method, task, dataset, variant, split)
),

run_aggregates as (
    select
        scores_inputs.*,
        md5(to_json([scores_inputs.scores_fingerprint, '{{ var('seed', 20240612) }}', variants.digest])::varchar)
            as aggregates_fingerprint
    from scores_inputs
    left join variants using (task, dataset)
),

curves as (
    select
        source, system, method, task, dataset, split,
        md5(string_agg(variant || ' ' || aggregates_fingerprint, ';' order by variant)) as curves_fingerprint
    from run_aggregates
    group by all
),

final as (
    select run_aggregates.*, curves.curves_fingerprint
    from run_aggregates
    inner join curves using (source, system, method, task, dataset, split)
)

select * from final
