{#- A drawn corpus never exceeds its budget (an error); a release corpus far over it is flagged
    (within_budget false) and warned about by release_within_budget. -#}
{% test within_budget(model) %}
select * from {{ model }} where n_tokens > budget and source <> 'loft_release'
{% endtest %}

{% test release_within_budget(model) %}
{{ config(severity='warn') }}
select task, dataset, corpus_id, context_length, n_tokens, budget
from {{ model }}
where source = 'loft_release' and not within_budget
{% endtest %}
