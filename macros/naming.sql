{# Size schemas are used verbatim (loft_128k, not main_loft_128k). #}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {{ custom_schema_name | trim if custom_schema_name else target.schema }}
{%- endmacro %}

{# Model `loft_128k__corpus` becomes table `corpus` in schema loft_128k: one table name per size. #}
{% macro generate_alias_name(custom_alias_name=none, node=none) -%}
    {%- if custom_alias_name -%}
        {{ custom_alias_name | trim }}
    {%- elif '__' in node.name -%}
        {{ node.name.split('__', 1)[1] }}
    {%- else -%}
        {{ node.name }}
    {%- endif -%}
{%- endmacro %}

{# Model-name prefix of the size being built ('loft_128k'): known at parse time, so refs resolve. #}
{% macro loft_prefix() -%}
    {{ model.name.split('__', 1)[0] }}
{%- endmacro %}

{# The benchmark size of the model being built: '32k', '128k' or '1m'. #}
{% macro loft_size() -%}
    {{ loft_prefix().replace('loft_', '') }}
{%- endmacro %}

{# ref() to the same-size sibling of a model: loft_ref('corpus') in loft_128k -> loft_128k__corpus. #}
{% macro loft_ref(name) -%}
    {{ ref(loft_prefix() ~ '__' ~ name) }}
{%- endmacro %}

{#
  loft_ref() for a view: the relation without its catalog, which DuckDB then resolves in the
  view's own database, so the view still reads when the warehouse file is renamed or copied.
#}
{% macro loft_view_ref(name) -%}
    {{ ref(loft_prefix() ~ '__' ~ name).include(database=false) }}
{%- endmacro %}
