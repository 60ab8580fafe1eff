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

{#
  A view's ref(): the relation without its catalog, which DuckDB then resolves in the view's own
  database, so the view still reads when the warehouse file is renamed or copied.
#}
{% macro view_ref(model_name) -%}
    {{ ref(model_name).include(database=false) }}
{%- endmacro %}
