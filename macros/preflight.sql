{#- Checks every setting before the first model (python/loft_warehouse/dbt_boundary/preflight.py): the `loft`
    settings dbt_project.yml gives every model, as the models read them. A bad one stops the run
    here, in one line. -#}
{% macro loft_preflight() %}
  {% if execute %}
    {% set values = (graph.nodes.values() | selectattr('resource_type', 'equalto', 'model') | first).config.loft %}
    {% set sql -%}
      select loft_preflight({{ dbt.string_literal(tojson(values)) }}, {{ dbt.string_literal(tojson({'resources': selected_resources, 'vars': invocation_args_dict.get('vars', {})})) }})
    {%- endset %}
    {% set problem = run_query(sql).columns[0].values()[0] %}
    {% if problem %}
      {{ exceptions.raise_compiler_error(problem) }}
    {% endif %}
  {% endif %}
{% endmacro %}
