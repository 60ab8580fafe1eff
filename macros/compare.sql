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
