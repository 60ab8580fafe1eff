{#- Rows where any of `columns` is null: one test for every not-null column of a model whose
    constraints dbt does not enforce (a view, a Python model), one node instead of one per column. -#}
{% test not_null_columns(model, columns) %}
select *
from {{ model }}
where {% for column in columns %}{{ column }} is null{{ ' or ' if not loop.last }}{% endfor %}
{% endtest %}
