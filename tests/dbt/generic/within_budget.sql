{% test within_budget(model) %}
select * from {{ model }} where n_tokens > budget
{% endtest %}
