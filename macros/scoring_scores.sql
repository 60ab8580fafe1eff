{#
  Per-turn scores, one family per task: each family gives one row per scored turn with its
  metrics as a list (metric, rule, value, is_empty), which int_turn_scores stores and the
  scores view unnests. rule 'loft' = upstream parse + upstream metric semantics; 'strict' =
  strict parse + the corrected semantics (see python/loft_warehouse/scoring/metrics.py, the
  reference these macros are tested against); 'raw' = computed on the raw generation (Lost in
  the Middle). is_empty says the rule's answer was empty although the response was ok.
#}

{# Answered with an empty list, under each rule (counted as n_empty_answer). #}
{% macro scoring_empty_answer_flags() -%}
    p.is_answered and len(p.answer_loft) = 0 as empty_loft,
        p.is_answered and len(p.answer_strict) = 0 as empty_strict
{%- endmacro %}


{# Every prediction (alias p) with its query turn (alias q). #}
{% macro scoring_predictions_with_queries(predictions, queries) -%}
    from {{ predictions }} as p
    inner join {{ queries }} as q using (task, dataset, qid, turn)
{%- endmacro %}


{#
  LOFT's answer normalisation (normalize.normalize_answer). NFD leaves ASCII text unchanged, so
  ASCII text is normalised here (lower, no ASCII punctuation, articles to a space, whitespace as
  str.split() sees it collapsed) and only other text goes to the Python function.
#}
{% macro scoring_normalize(expr) -%}
    case when regexp_full_match({{ expr }}, '[\x00-\x7f]*')
    then trim(regexp_replace(regexp_replace(regexp_replace(lower({{ expr }}), '[!-/:-@\[-`{-~]', '', 'g'),
                                            '\b(a|an|the)\b', ' ', 'g'),
                             '[\t\n\x0b\x0c\r\x1c-\x1f ]+', ' ', 'g'), ' ')
    else loft_normalize({{ expr }}) end
{%- endmacro %}


{# Per gold, the 1-based positions of the predictions it matches (either string contains the other). #}
{% macro scoring_match_lists(golds, preds) -%}
    list_transform({{ golds }}, lambda g: list_filter(range(1, len({{ preds }}) + 1),
                                                      lambda j: contains({{ preds }}[j], g) or contains(g, {{ preds }}[j])))
{%- endmacro %}


{# Whether every gold is matched one-to-one (metrics.assigned_matches(golds, preds) = len(golds)),
   decided in SQL where the matches settle it: no when a gold matches nothing or fewer predictions
   match than there are golds; yes when no prediction matches two golds, or when a greedy pass (golds
   with fewest matches first, each taking its first free prediction) matches every gold, a witness
   of a full assignment. Only the rest go to the Python solver. #}
{% macro scoring_all_golds_assigned(matches, golds, preds) -%}
    case
        when list_bool_or(list_transform({{ matches }}, lambda m: len(m) = 0)) then false
        when len(flatten({{ matches }})) = len(list_distinct(flatten({{ matches }}))) then true
        when len(list_distinct(flatten({{ matches }}))) < len({{ golds }}) then false
        when list_count(list_reduce(
                 list_transform(list_sort(list_transform({{ matches }}, lambda m: {'n': len(m), 'm': m})), lambda s: s.m),
                 lambda taken, m: taken || [list_filter(m, lambda j: not list_contains(taken, j))[1]],
                 []::bigint[])) = len({{ golds }}) then true
        else loft_assigned_matches({{ golds }}, {{ preds }}) = len({{ golds }})
    end
{%- endmacro %}


{# Datasets whose answers are entity names, the titles of their documents (QUEST-LOFT, seed 002 §3.5). #}
{% macro scoring_entity_answer_datasets() -%}
    ('qampari', 'quest')
{%- endmacro %}

{# Tasks whose answers are document IDs, scored by recall (LOFT's evaluator scores mm as retrieval). #}
{% macro scoring_id_tasks() -%}
    ('retrieval', 'mm')
{%- endmacro %}

{# Lost in the Middle key-value retrieval datasets (task litm). #}
{% macro scoring_key_value_datasets() -%}
    ('kv_retrieval')
{%- endmacro %}

{# The key columns every score row carries from its prediction. #}
{% macro scoring_key_columns(alias) -%}
    {{ alias }}.source,
    {{ alias }}.system,
    {{ alias }}.method,
    {{ alias }}.stage,
    {{ alias }}.task,
    {{ alias }}.dataset,
    {{ alias }}.corpus_id,
    {{ alias }}.variant,
    {{ alias }}.split,
    {{ alias }}.qid,
    {{ alias }}.turn,
    {{ alias }}.n_turns,
    {{ alias }}.status,
    {{ alias }}.is_answered
{%- endmacro %}

{% macro scoring_key_names() -%}
    source, system, method, stage, task, dataset, corpus_id, variant, split, qid, turn, n_turns, status, is_answered
{%- endmacro %}


{#
  recall@k and MRecall@k, k in 1, 2, 3, 5, and capped_recall@1, over pids.
  loft: IDs compared as str(x).strip() on both sides; the first k predictions, then distinct;
  hits over len(gold) counting duplicates (capped: over min(k, len(gold))); MRecall 1 iff
  hits = min(k, len(gold)); no prediction scores 0. An imported line LOFT reads against
  another gold (gold_loft) is scored against that one.
  strict: the prediction list is already distinct (NULL = unknown ID, never a hit); gold is a set.
#}
{% macro scoring_retrieval_scores(predictions, queries) %}
with

base as (
    select
        {{ scoring_key_columns('p') }},
        {{ scoring_stripped("coalesce(from_json(p.gold_loft, '[\"VARCHAR\"]'), q.gold_pids)") }} as gold,
        list_distinct(q.gold_pids) as gold_set,
        {{ scoring_stripped('p.pred_pids_loft') }} as pred_loft,
        p.pred_pids_strict as pred_strict,
        {{ scoring_empty_answer_flags() }}
    {{ scoring_predictions_with_queries(predictions, queries) }}
    where p.task in {{ scoring_id_tasks() }}
),

{#- Per prediction, 1 where it is a hit (loft: its first occurrence, found in the gold; strict:
    found in the gold set), so that hits@k counts the first k marks (list_count skips NULLs). #}
marked as (
    select
        base.*,
        list_transform(
            base.pred_loft,
            lambda x, i: case when list_contains(base.gold, x) and list_position(base.pred_loft, x) = i then 1 end
        ) as hit_marks_loft,
        list_transform(base.pred_strict, lambda x: case when list_contains(base.gold_set, x) then 1 end) as hit_marks_strict
    from base
),

hits as (
    select
        marked.*,
        {%- for k in [1, 2, 3, 5] %}
        list_count(hit_marks_loft[1:{{ k }}]) as hits_loft_{{ k }},
        list_count(hit_marks_strict[1:{{ k }}]) as hits_strict_{{ k }}
        {{- ',' if not loop.last }}
        {%- endfor %}
    from marked
)

select
    {{ scoring_key_names() }},
    [
        {%- for k in [1, 2, 3, 5] %}
        {
            'metric': 'recall@{{ k }}', 'rule': 'loft', 'is_empty': empty_loft,
            'value': case when len(pred_loft) = 0 or len(gold) = 0 then 0.0
                          else hits_loft_{{ k }} / len(gold) end
        },
        {
            'metric': 'mrecall@{{ k }}', 'rule': 'loft', 'is_empty': empty_loft,
            'value': case when len(pred_loft) = 0 then 0.0
                          else (hits_loft_{{ k }} = least({{ k }}, len(gold)))::double end
        },
        {
            'metric': 'recall@{{ k }}', 'rule': 'strict', 'is_empty': empty_strict,
            'value': case when len(gold_set) = 0 then 0.0
                          else hits_strict_{{ k }} / len(gold_set) end
        },
        {
            'metric': 'mrecall@{{ k }}', 'rule': 'strict', 'is_empty': empty_strict,
            'value': case when len(gold_set) = 0 then 0.0
                          else (hits_strict_{{ k }} = least({{ k }}, len(gold_set)))::double end
        },
        {%- endfor %}
        {
            'metric': 'capped_recall@1', 'rule': 'loft', 'is_empty': empty_loft,
            'value': case when len(pred_loft) = 0 or len(gold) = 0 then 0.0
                          else hits_loft_1 / least(1, len(gold)) end
        },
        {
            'metric': 'capped_recall@1', 'rule': 'strict', 'is_empty': empty_strict,
            'value': case when len(gold_set) = 0 then 0.0
                          else hits_strict_1 / least(1, len(gold_set)) end
        }
    ] as metric_values
from hits
{% endmacro %}


{#
  RAG with one answer per question: only the first answer counts.
  em / subspan_em / f1 (SQuAD normalisation + NFD); loft keeps golds that normalise to "" (a
  substring of every answer), strict drops them and gives an empty answer 0.
  rr_fuzzy_match (R&R): all unique words of a gold in the answer or the reverse.
  litm_best_subspan_em (Lost in the Middle): a gold in the first line of the raw generation.
#}
{% macro scoring_rag_single_scores(predictions, queries) %}
with

base as (
    select
        {{ scoring_key_columns('p') }},
        from_json(q.gold, '["VARCHAR"]') as gold,
        p.answer_loft,
        p.answer_strict,
        p.raw_text,
        {{ scoring_empty_answer_flags() }},
        p.is_answered and coalesce(trim(p.raw_text), '') = '' as empty_raw
    {{ scoring_predictions_with_queries(predictions, queries) }}
    where (p.task = 'rag' and not q.is_multi_answer)
        or p.task = 'rr'
        or (p.task = 'litm' and p.dataset not in {{ scoring_key_value_datasets() }})
),

normalized as materialized (
    select
        *,
        list_transform(gold, lambda g: {{ scoring_normalize('g') }}) as gold_norm,
        list_filter(gold_norm, lambda g: g <> '') as gold_norm_strict,
        {{ scoring_normalize('answer_loft[1]') }} as first_loft,
        {{ scoring_normalize('answer_strict[1]') }} as first_strict,
        list_transform(gold, lambda g: loft_rr_words(g)) as gold_words,
        loft_rr_words(answer_loft[1]) as words_loft,
        loft_rr_words(answer_strict[1]) as words_strict,
        loft_normalize_litm(split_part(raw_text, chr(10), 1)) as first_line
    from base
)

select
    {{ scoring_key_names() }},
    [
        {
            'metric': 'em', 'rule': 'loft', 'is_empty': empty_loft,
            'value': coalesce(list_contains(gold_norm, first_loft), false)::double
        },
        {
            'metric': 'subspan_em', 'rule': 'loft', 'is_empty': empty_loft,
            'value': coalesce(list_bool_or(list_transform(gold_norm, lambda g: contains(first_loft, g))), false)::double
        },
        {
            'metric': 'f1', 'rule': 'loft', 'is_empty': empty_loft,
            'value': loft_f1_loft(gold, answer_loft)
        },
        {
            'metric': 'rr_fuzzy_match', 'rule': 'loft', 'is_empty': empty_loft,
            'value': coalesce(len(words_loft) > 0 and list_bool_or(list_transform(gold_words,
                lambda w: len(w) > 0 and (list_has_all(words_loft, w) or list_has_all(w, words_loft)))), false)::double
        },
        {
            'metric': 'em', 'rule': 'strict', 'is_empty': empty_strict,
            'value': coalesce(first_strict <> '' and list_contains(gold_norm_strict, first_strict), false)::double
        },
        {
            'metric': 'subspan_em', 'rule': 'strict', 'is_empty': empty_strict,
            'value': coalesce(first_strict <> '' and list_bool_or(list_transform(gold_norm_strict,
                lambda g: contains(first_strict, g))), false)::double
        },
        {
            'metric': 'f1', 'rule': 'strict', 'is_empty': empty_strict,
            'value': loft_f1_strict(gold, answer_strict)
        },
        {
            'metric': 'rr_fuzzy_match', 'rule': 'strict', 'is_empty': empty_strict,
            'value': coalesce(len(words_strict) > 0 and list_bool_or(list_transform(gold_words,
                lambda w: len(w) > 0 and (list_has_all(words_strict, w) or list_has_all(w, words_strict)))), false)::double
        },
        {
            'metric': 'litm_best_subspan_em', 'rule': 'raw', 'is_empty': empty_raw,
            'value': coalesce(list_bool_or(list_transform(gold,
                lambda g: contains(first_line, loft_normalize_litm(g)))), false)::double
        }
    ] as metric_values
from normalized
{% endmacro %}


{#
  RAG with several answers per question (QAMPARI, QUEST).
  subspan_em: every gold matched one-to-one (either string contains the other; decided here unless
  the matches leave it open, then by linear sum assignment in Python); em: answer set = gold
  set; coverage: distinct answers equal to a gold over len(gold); set_precision / set_recall / set_f1 / set_accuracy: QUEST-LOFT set metrics
  (an empty side scores 1 only against an empty other side). loft: an empty answer scores 0 in
  em and subspan_em and, as upstream returns early with other keys, has an f1 row (0) and no
  coverage row, so the loft means have upstream's denominators; strict: answers and golds
  normalising to "" are dropped, duplicates ignored, and every row has every metric.
  Datasets: int_scored_queries.is_multi_answer (QAMPARI, QUEST, imported multi_value_rag).
#}
{% macro scoring_rag_multi_scores(predictions, queries) %}
with

{#- Materialised so that the per-answer work after it runs on every thread: DuckDB splits a
    table's scan only by row group (122,880 rows), a CTE's at any size. #}
base as materialized (
    select
        {{ scoring_key_columns('p') }},
        from_json(q.gold, '["VARCHAR"]') as gold,
        p.answer_loft,
        p.answer_strict,
        {{ scoring_empty_answer_flags() }}
    {{ scoring_predictions_with_queries(predictions, queries) }}
    where p.task = 'rag' and q.is_multi_answer
),

{#- The rules' answer lists are mostly the same list (always for an import): normalised once then. #}
normalized_loft as (
    select
        *,
        list_transform(gold, lambda g: {{ scoring_normalize('g') }}) as gold_norm,
        list_transform(answer_loft, lambda a: {{ scoring_normalize('a') }}) as pred_norm_loft
    from base
),

normalized as materialized (
    select
        *,
        case when answer_strict is not distinct from answer_loft then pred_norm_loft
             else list_transform(answer_strict, lambda a: {{ scoring_normalize('a') }}) end as pred_norm_strict
    from normalized_loft
),

sets as (
    select
        *,
        list_distinct(gold_norm) as gold_set_loft,
        list_distinct(pred_norm_loft) as pred_set_loft,
        list_distinct(list_filter(gold_norm, lambda g: g <> '')) as gold_set_strict,
        list_distinct(list_filter(pred_norm_strict, lambda a: a <> '')) as pred_set_strict
    from normalized
),

{#- For each gold, the predictions it matches (either contains the other), from which
    scoring_all_golds_assigned decides the one-to-one assignment. #}
match_lists as (
    select
        *,
        {{ scoring_match_lists('gold_norm', 'pred_norm_loft') }} as matches_loft,
        {{ scoring_match_lists('gold_set_strict', 'pred_set_strict') }} as matches_strict
    from sets
),

assigned as materialized (
    select
        *,
        case when len(answer_loft) = 0 then 0.0
             else ({{ scoring_all_golds_assigned('matches_loft', 'gold_norm', 'pred_norm_loft') }})::double
        end as subspan_loft,
        (len(gold_set_strict) > 0
         and {{ scoring_all_golds_assigned('matches_strict', 'gold_set_strict', 'pred_set_strict') }})::double
            as subspan_strict
    from match_lists
),

counted as (
    select
        *,
        len(list_filter(pred_set_loft, lambda a: list_contains(gold_set_loft, a))) as hits_loft,
        len(list_filter(pred_set_strict, lambda a: list_contains(gold_set_strict, a))) as hits_strict
    from assigned
),

set_scores as (
    select
        *,
        case when len(pred_set_loft) > 0 then hits_loft / len(pred_set_loft)
             else (len(gold_set_loft) = 0)::double end as precision_loft,
        case when len(gold_set_loft) > 0 then hits_loft / len(gold_set_loft)
             else (len(pred_set_loft) = 0)::double end as recall_loft,
        case when len(pred_set_strict) > 0 then hits_strict / len(pred_set_strict)
             else (len(gold_set_strict) = 0)::double end as precision_strict,
        case when len(gold_set_strict) > 0 then hits_strict / len(gold_set_strict)
             else (len(pred_set_strict) = 0)::double end as recall_strict
    from counted
),

all_rows as (
    select
        {{ scoring_key_names() }},
        len(answer_loft) = 0 as is_empty_answer_list,
        [
            {
                'metric': 'subspan_em', 'rule': 'loft', 'is_empty': empty_loft,
                'value': subspan_loft
            },
            {
                'metric': 'em', 'rule': 'loft', 'is_empty': empty_loft,
                'value': case when len(answer_loft) = 0 then 0.0
                              else (list_sort(gold_set_loft) = list_sort(pred_set_loft))::double end
            },
            {
                'metric': 'coverage', 'rule': 'loft', 'is_empty': empty_loft,
                'value': case when len(answer_loft) = 0 or len(gold) = 0 then 0.0
                              else hits_loft / len(gold) end
            },
            {'metric': 'f1', 'rule': 'loft', 'is_empty': empty_loft, 'value': 0.0},
            {'metric': 'set_precision', 'rule': 'loft', 'is_empty': empty_loft, 'value': precision_loft},
            {'metric': 'set_recall', 'rule': 'loft', 'is_empty': empty_loft, 'value': recall_loft},
            {
                'metric': 'set_f1', 'rule': 'loft', 'is_empty': empty_loft,
                'value': case when precision_loft + recall_loft = 0 then 0.0
                              else 2 * precision_loft * recall_loft / (precision_loft + recall_loft) end
            },
            {
                'metric': 'set_accuracy', 'rule': 'loft', 'is_empty': empty_loft,
                'value': (list_sort(gold_set_loft) = list_sort(pred_set_loft))::double
            },
            {
                'metric': 'subspan_em', 'rule': 'strict', 'is_empty': empty_strict,
                'value': subspan_strict
            },
            {
                'metric': 'em', 'rule': 'strict', 'is_empty': empty_strict,
                'value': (len(gold_set_strict) > 0 and list_sort(gold_set_strict) = list_sort(pred_set_strict))::double
            },
            {
                'metric': 'coverage', 'rule': 'strict', 'is_empty': empty_strict,
                'value': case when len(gold_set_strict) = 0 then 0.0
                              else hits_strict / len(gold_set_strict) end
            },
            {'metric': 'set_precision', 'rule': 'strict', 'is_empty': empty_strict, 'value': precision_strict},
            {'metric': 'set_recall', 'rule': 'strict', 'is_empty': empty_strict, 'value': recall_strict},
            {
                'metric': 'set_f1', 'rule': 'strict', 'is_empty': empty_strict,
                'value': case when precision_strict + recall_strict = 0 then 0.0
                              else 2 * precision_strict * recall_strict / (precision_strict + recall_strict) end
            },
            {
                'metric': 'set_accuracy', 'rule': 'strict', 'is_empty': empty_strict,
                'value': (list_sort(gold_set_strict) = list_sort(pred_set_strict))::double
            }
        ] as metric_values
    from set_scores
)

select
    {{ scoring_key_names() }},
    list_filter(metric_values, lambda m: m.rule <> 'loft'
        or (m.metric = 'coverage' and not is_empty_answer_list)
        or (m.metric = 'f1' and is_empty_answer_list)
        or m.metric not in ('coverage', 'f1')) as metric_values
from all_rows
{% endmacro %}


{#
  Many-shot ICL accuracy. loft: the gold is target.split(" ") and the first answer scores 1
  when it equals any of those words (upstream compares against each listed gold; "(A)"
  normalises to "", the article); strict: the whole answer must equal the whole target under
  a normalisation that keeps articles.
#}
{% macro scoring_icl_scores(predictions, queries) %}
with

base as (
    select
        {{ scoring_key_columns('p') }},
        from_json(q.gold, '["VARCHAR"]') as gold,
        p.answer_loft,
        p.answer_strict,
        {{ scoring_empty_answer_flags() }}
    {{ scoring_predictions_with_queries(predictions, queries) }}
    where p.task = 'icl'
),

normalized as materialized (
    select
        *,
        loft_normalize_label(array_to_string(gold, ' ')) as target_strict,
        loft_normalize_label(array_to_string(answer_strict, ' ')) as answer_joined_strict
    from base
)

select
    {{ scoring_key_names() }},
    [
        {
            'metric': 'em', 'rule': 'loft', 'is_empty': empty_loft,
            'value': coalesce(list_contains(list_transform(gold, lambda g: loft_normalize(g)),
                                            loft_normalize(answer_loft[1])), false)::double
        },
        {
            'metric': 'em', 'rule': 'strict', 'is_empty': empty_strict,
            'value': (target_strict <> '' and target_strict = answer_joined_strict)::double
        }
    ] as metric_values
from normalized
{% endmacro %}


{#
  SQL execution accuracy, scored by the SQL track's exec_acc_loft / exec_acc_strict (one
  loft_exec_acc call per turn gives both). strict is order-sensitive when the gold SQL has a
  top-level ORDER BY (queries.gold_is_ordered). A query without gold rows stops the build
  (LOFT keeps only queries whose gold result is non-empty).
  loft scores an imported line against the gold LOFT reads for it (gold_loft) where that differs.
  exec_acc_conversation (grain 'conversation', on the last turn's row): 1 iff every turn of the
  conversation scores 1, as the paper describes SParC; upstream averages turns instead.
#}
{% macro scoring_sql_scores(predictions, queries) %}
with

{#- Materialised so that the per-answer work after it runs on every thread: DuckDB splits a
    table's scan only by row group (122,880 rows), a CTE's at any size. #}
base as materialized (
    select
        {{ scoring_key_columns('p') }},
        case
            when coalesce(json_array_length(q.gold), 0) > 0 then q.gold
            else error('SQL query ' || q.dataset || '/' || q.qid || ' turn ' || q.turn || ' has no gold rows')
        end as gold,
        coalesce(p.gold_loft, q.gold) as gold_loft,
        coalesce(q.gold_is_ordered, false) as gold_is_ordered,
        p.answer_loft_json,
        p.answer_strict_json,
        {{ scoring_empty_answer_flags() }}
    {{ scoring_predictions_with_queries(predictions, queries) }}
    where p.task = 'sql'
),

{#- SQL decides most turns; loft_exec_acc (Python, the reference) the ones it leaves NULL. #}
scored as materialized (
    select
        *,
        case
            when not is_answered then null
            when exec_acc_in_sql.loft is not null and exec_acc_in_sql.strict is not null then exec_acc_in_sql
            else loft_exec_acc(gold_loft, answer_loft_json, gold, answer_strict_json, gold_is_ordered)
        end as acc
    from ({{ scoring_exec_acc_in_sql('base') }})
),

per_turn as (
    select
        {{ scoring_key_names() }},
        empty_loft,
        empty_strict,
        case when is_answered then acc.loft else 0.0 end as value_loft,
        case when is_answered then acc.strict else 0.0 end as value_strict
    from scored
),

conversations as (
    select
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
        max(turn) as turn,
        max(n_turns) as n_turns,
        coalesce(min(status) filter (where status <> 'ok'), 'ok') as status,
        bool_and(is_answered) as is_answered,
        [
            {
                'metric': 'exec_acc_conversation', 'rule': 'loft', 'is_empty': bool_or(empty_loft),
                'value': bool_and(value_loft = 1)::double
            },
            {
                'metric': 'exec_acc_conversation', 'rule': 'strict', 'is_empty': bool_or(empty_strict),
                'value': bool_and(value_strict = 1)::double
            }
        ] as metric_values
    from per_turn
    group by source, system, method, stage, task, dataset, corpus_id, variant, split, qid
)

select
    {{ scoring_key_names() }},
    'turn' as grain,
    [
        {'metric': 'exec_acc', 'rule': 'loft', 'is_empty': empty_loft, 'value': value_loft},
        {'metric': 'exec_acc', 'rule': 'strict', 'is_empty': empty_strict, 'value': value_strict}
    ] as metric_values
from per_turn
union all by name
select *, 'conversation' as grain from conversations
{% endmacro %}


{#
  Each adjudicated query's verdicts under each gold version: its MATCH answers (gold_set) and
  DEBATABLE ones, LOFT-normalised; a query is named by qid, or by its normalised question
  (question_key) when the verdicts give none.
#}
{% macro scoring_gold_verdicts(adjudications) %}
select
    gold_version,
    task,
    dataset,
    qid,
    case when qid is null then loft_normalize(question) end as question_key,
    list_distinct(list(loft_normalize(answer)) filter (where rating = 'MATCH')) as gold_set,
    coalesce(list_distinct(list(loft_normalize(answer)) filter (where rating = 'DEBATABLE')), []) as debatable
from {{ adjudications }}
group by all
{% endmacro %}


{#
  Adjudicated gold (rule 'revised'; stg_gold_adjudications): under each gold version, a RAG query
  the version adjudicates (by qid, or by its question after loft_normalize) has its MATCH answers
  as gold, and its DEBATABLE answers are removed from both gold and prediction; every other
  answer counts as NO_MATCH (QUEST-LOFT-128K-Revised, seed 002 §4.1, App. E, is version
  quest_loft_revised). Set precision, recall, F1, accuracy (set equality) and subspan_em (every
  gold answer predicted), on the strict answer (normalised, distinct, non-empty). An empty side
  scores 1 only against an empty other side. Queries a version does not adjudicate get no rows
  under it; a query adjudicated by several versions gets one row per version.
#}
{% macro scoring_adjudicated_scores(predictions, queries, adjudications) %}
with

verdicts as ({{ scoring_gold_verdicts(adjudications) }}),

base as (
    select
        {{ scoring_key_columns('p') }},
        verdicts.gold_version,
        {{ scoring_empty_answer_flags() }},
        coalesce(verdicts.gold_set, []) as gold_set,
        list_filter(
            list_distinct(list_filter(list_transform(p.answer_strict, lambda a: loft_normalize(a)), lambda a: a <> '')),
            lambda a: not list_contains(verdicts.debatable, a)
        ) as pred_set
    {{ scoring_predictions_with_queries(predictions, queries) }}
    inner join verdicts
        on verdicts.task = p.task
        and verdicts.dataset = p.dataset
        and (verdicts.qid = p.qid or verdicts.question_key = loft_normalize(q.query_text))
    where p.task = 'rag'
),

counted as (
    select
        *,
        len(list_filter(pred_set, lambda a: list_contains(gold_set, a))) as hits
    from base
),

rates as (
    select
        *,
        case when len(pred_set) > 0 then hits / len(pred_set) else (len(gold_set) = 0)::double end as set_precision,
        case when len(gold_set) > 0 then hits / len(gold_set) else (len(pred_set) = 0)::double end as set_recall
    from counted
)

select
    {{ scoring_key_names() }},
    gold_version,
    list_transform([
        {'metric': 'set_precision', 'value': set_precision},
        {'metric': 'set_recall', 'value': set_recall},
        {
            'metric': 'set_f1',
            'value': case when set_precision + set_recall = 0 then 0.0
                          else 2 * set_precision * set_recall / (set_precision + set_recall) end
        },
        {'metric': 'set_accuracy', 'value': (list_sort(gold_set) = list_sort(pred_set))::double},
        {'metric': 'subspan_em', 'value': (hits = len(gold_set))::double}
    ], lambda m: {'metric': m.metric, 'rule': 'revised', 'is_empty': empty_strict, 'value': m.value}) as metric_values
from rates
{% endmacro %}


{#
  Lost in the Middle key-value retrieval (seed 004): correct iff the value appears in the raw
  answer, compared lower-cased, as that paper's evaluation script does.
#}
{% macro scoring_key_value_scores(predictions, queries) %}
select
    {{ scoring_key_columns('p') }},
    [{
        'metric': 'kv_accuracy',
        'rule': 'raw',
        'is_empty': p.is_answered and coalesce(trim(p.raw_text), '') = '',
        'value': coalesce(contains(lower(p.raw_text), lower(from_json(q.gold, '["VARCHAR"]')[1])), false)::double
    }] as metric_values
{{ scoring_predictions_with_queries(predictions, queries) }}
where p.task = 'litm' and p.dataset in {{ scoring_key_value_datasets() }}
{% endmacro %}


{#
  The primary metric of a dataset (paper Table 2): recall@1 for single-gold retrieval and mm,
  MRecall@k with k = max_gold for multi-gold retrieval, subspan EM for RAG, execution
  accuracy for SQL, accuracy (em) for many-shot ICL; the studies' own: best-subspan EM on the
  first line (Lost in the Middle QA), the value in the answer (key-value retrieval), R&R's
  symmetric fuzzy match.
#}
{% macro scoring_primary_metric(task, dataset, max_gold) -%}
    case
        when {{ task }} in {{ scoring_id_tasks() }} then
            case when coalesce({{ max_gold }}, 1) <= 1 then 'recall@1' else 'mrecall@' || {{ max_gold }} end
        when {{ task }} = 'rag' then 'subspan_em'
        when {{ task }} = 'sql' then 'exec_acc'
        when {{ task }} = 'icl' then 'em'
        when {{ task }} = 'litm' then case when {{ dataset }} in {{ scoring_key_value_datasets() }} then 'kv_accuracy'
                              else 'litm_best_subspan_em' end
        when {{ task }} = 'rr' then 'rr_fuzzy_match'
    end
{%- endmacro %}

{# The rule a dataset's primary metric is read under: raw for the Lost in the Middle metrics. #}
{% macro scoring_primary_rule(task) -%}
    case when {{ task }} = 'litm' then 'raw' else 'loft' end
{%- endmacro %}


{#
  What is scored per query turn: the final stage's rows of each method, a multi-call final
  stage (one verification call per candidate) read as one answer: the calls' answers in call
  order, answered only if every call was (else its first other status).
#}
{% macro scoring_final_predictions(predictions) %}
with

final_rows as not materialized (
    select
        source, system, method, stage, task, dataset, corpus_id, variant, split, qid, turn, call_index, n_turns,
        status, is_answered, raw_text, answer_loft, answer_strict, answer_loft_json, answer_strict_json,
        pred_pids_loft, pred_pids_strict, gold_loft
    from {{ predictions }}
    where is_final
),

multi_call as (
    select distinct source, system, method, task, dataset, corpus_id, variant, split, qid, turn
    from final_rows
    where call_index > 0
),

single as (
    select * from final_rows
    anti join multi_call using (source, system, method, task, dataset, corpus_id, variant, split, qid, turn)
),

combined as (
    select
        source, system, method, stage, task, dataset, corpus_id, variant, split, qid, turn,
        max(n_turns) as n_turns,
        coalesce(arg_min(status, call_index) filter (where status <> 'ok'), 'ok') as status,
        bool_and(is_answered) as is_answered,
        flatten(list(answer_loft order by call_index)) as answer_loft,
        flatten(list(answer_strict order by call_index)) as answer_strict,
        to_json(flatten(list(answer_loft order by call_index)))::varchar as answer_loft_json,
        to_json(flatten(list(answer_strict order by call_index)))::varchar as answer_strict_json,
        string_agg(raw_text, chr(10) order by call_index) as raw_text,
        []::varchar[] as pred_pids_loft,
        []::varchar[] as pred_pids_strict
    from final_rows
    semi join multi_call using (source, system, method, task, dataset, corpus_id, variant, split, qid, turn)
    group by all
)

select * from single
union all by name
select * from combined
{% endmacro %}


{#
  The metric and rule names int_turn_scores stores as ENUMs: a million turns hold 18 million
  metric entries, and DuckDB writes an ENUM as a small integer where it compresses every
  VARCHAR string on write (5.0 s -> 1.1 s for the retrieval set's). A name missing here stops
  the build with a conversion error naming it.
#}
{# The gold_version of scores against the dataset's own gold (not an adjudicated version). #}
{% macro scoring_release_gold() -%}
    release
{%- endmacro %}

{% macro scoring_metric_type() -%}
    enum('capped_recall@1', 'coverage', 'em', 'exec_acc', 'exec_acc_conversation', 'f1', 'kv_accuracy',
         'litm_best_subspan_em', 'mrecall@1', 'mrecall@2', 'mrecall@3', 'mrecall@5', 'recall@1', 'recall@2',
         'recall@3', 'recall@5', 'rr_fuzzy_match', 'set_accuracy', 'set_f1', 'set_precision', 'set_recall',
         'subspan_em')
{%- endmacro %}

{% macro scoring_rule_type() -%}
    enum('loft', 'raw', 'revised', 'strict')
{%- endmacro %}




