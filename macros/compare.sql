{#
  The sizes whose schema (loft_<size>, plus `suffix`: '_internal' for the intermediate tables)
  holds `identifier` in the warehouse being built, as [size, relation] pairs: the cross-size
  tables (models/loft_compare) read only the sizes that exist, so they build when only some
  sizes are built, and loft_compare.sizes says which are missing.
#}
{% macro compare_built_sizes(identifier, suffix='') %}
    {%- set found = [] -%}
    {%- if execute -%}
        {%- for size in ['32k', '128k', '1m'] -%}
            {%- set relation = adapter.get_relation(database=target.database, schema='loft_' ~ size ~ suffix, identifier=identifier) -%}
            {%- if relation is not none -%}
                {%- do found.append([size, relation]) -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(found) }}
{% endmacro %}


{#
  The cross-size runs (source, system, method, task, dataset, variant, split) with
  compare_fingerprint: a digest of the run's scores_fingerprint at every built size (`sized`:
  compare_built_sizes('int_run_fingerprints', '_internal')) and `salt` (the model's own code and
  settings). The incremental cross-size tables (scaling_scores, scaling_curves) compute a run
  again only when it changes.
#}
{% macro compare_run_fingerprints(sized, salt) -%}
    (
        select
            source, system, method, task, dataset, variant, split,
            md5(string_agg(size || ' ' || scores_fingerprint, ';' order by size) || '{{ salt }}') as compare_fingerprint
        from (
            {% for size, relation in sized %}
            select '{{ size }}' as size, source, system, method, task, dataset, variant, split, scores_fingerprint
            from {{ relation }}
            {{ 'union all' if not loop.last }}
            {% endfor %}
            {% if not sized %}
            select null::varchar as size, null::varchar as source, null::varchar as system, null::varchar as method,
                   null::varchar as task, null::varchar as dataset, null::varchar as variant, null::varchar as split,
                   null::varchar as scores_fingerprint
            where false
            {% endif %}
        )
        group by all
    )
{%- endmacro %}
