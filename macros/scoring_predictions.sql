{#
  Predictions: every answer a system owes, parsed under both rules, retrieval IDs mapped to pids.

  Relations are arguments so the SQL can be rendered and tested outside dbt; in a model the
  defaults point at the same-size siblings. The loft_parse_* functions come from the dbt-duckdb
  plugin loft_warehouse.dbt_boundary.plugin.
#}



{#
  The runs of `responses` (a run: source, system, task, dataset, variant, method, split, with a
  stage-1 response) and the quick-try limit N each was sent under (responses.query_limit; null
  for a full run), which scoring reads instead of the var of whatever build rescores it.
#}
{% macro scoring_run_limits(responses) %}
    select source, system, task, dataset, variant, method, split, max(query_limit) as query_limit
    from {{ responses }}
    where stage = 1
    group by all
{% endmacro %}




{#
  list(value order by pos) of a group, as an unordered list of (pos, value) sorted afterwards:
  much faster than an ordered aggregate for millions of short groups. [] when no row passes
  the filter.
#}
{% macro scoring_ordered_list(value, filter=none) -%}
    coalesce(
        list_transform(
            list_sort(list({'pos': pos, 'value': {{ value }}}){% if filter %} filter (where {{ filter }}){% endif %}),
            lambda entry: entry.value
        ),
        []
    )
{%- endmacro %}


{#
  Each element of a list as Python's str.strip() leaves it: the list itself when no element
  holds a character str.isspace() is true for (one regex over the joined text, where a lambda
  per element costs far more over a million lists).
#}
{% macro scoring_stripped(list) -%}
    case
        when regexp_matches(
            array_to_string({{ list }}, ''),
            loft_python_whitespace_class()
        ) then list_transform({{ list }}, lambda a: loft_python_strip(a))
        else {{ list }}
    end
{%- endmacro %}

{# The first occurrence of each element, in list order (the list itself when no element repeats). #}
{% macro scoring_first_occurrences(list) -%}
    case
        when list_unique({{ list }}) = len({{ list }}) then {{ list }}
        else list_filter({{ list }}, lambda a, i: list_position({{ list }}, a) = i)
    end
{%- endmacro %}


{#
  Maps one rule's answer list of retrieval rows to pids, element by element.
  loft: the key is the answer text exactly as upstream looks it up (str(answer)); order and
  duplicates are kept. strict: the key is stripped (Python's str.strip()) and only its first
  occurrence is kept.
  Shown IDs map through prompt_doc_ids of the row's variant; imported pids are checked
  against the corpus.
#}
{% macro scoring_mapped_ids(answers_relation, answer_column, strict, prompt_doc_ids, corpus) %}
select
    items.row_id,
    items.pos,
    items.item,
    coalesce(doc_ids.pid, items.pid_lookup) as pid,
    coalesce(doc_ids.pid, corpus.pid) is not null as is_known
from (
    select
        *,
        case when id_space = 'shown' then item end as shown_lookup,
        case when id_space = 'pid' then loft_python_strip(item) end as pid_lookup
    from (
        select
            row_id,
            id_space,
            task,
            dataset,
            corpus_id,
            variant,
            pos,
            ids[pos] as item
        from (
            select *, generate_subscripts(ids, 1) as pos
            from (
                select
                    *,
                    {% if strict -%}
                    {{ scoring_first_occurrences('stripped') }}
                    {%- else -%}
                    {{ answer_column }}
                    {%- endif %} as ids
                from (
                    select
                        *{% if strict %},
                        {{ scoring_stripped(answer_column) }} as stripped
                        {%- endif %}
                    from {{ answers_relation }}
                )
            )
        )
    )
) as items
left join {{ prompt_doc_ids }} as doc_ids
    on doc_ids.task = items.task
    and doc_ids.dataset = items.dataset
    and doc_ids.corpus_id = items.corpus_id
    and doc_ids.variant = items.variant
    and doc_ids.shown_id = items.shown_lookup
left join (select distinct task, dataset, corpus_id, pid from {{ corpus }}) as corpus
    on corpus.task = items.task
    and corpus.dataset = items.dataset
    and corpus.corpus_id = items.corpus_id
    and corpus.pid = items.pid_lookup
{% endmacro %}






