{# Rows where any of the columns (shares) is below 0 or above 1; nulls pass. #}
{% test in_unit_interval(model, columns) %}
select * from {{ model }}
where {% for column in columns %}{{ column }} not between 0 and 1{% if not loop.last %} or {% endif %}{% endfor %}
{% endtest %}
