{#- Rows where any of `columns` is null: the not_null of a view, whose constraints dbt does not enforce. -#}
{% test not_null_columns(model, columns) %}
select *
from {{ model }}
where {% for column in columns %}{{ column }} is null{{ ' or ' if not loop.last }}{% endfor %}
{% endtest %}
