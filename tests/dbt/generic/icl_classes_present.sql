{# Every class of an ICL dataset's example pool appears in every context built from it. #}
{% test icl_classes_present(model, documents, corpus_stats) %}
with

pool_classes as (
    select distinct task, dataset, label from {{ documents }} where task = 'icl' and label is not null
),

contexts as (
    select distinct task, dataset, context_length from {{ corpus_stats }} where task = 'icl'
),

context_budgets as (
    select task, dataset, context_length, budget from {{ corpus_stats }} where task = 'icl'
),

present as (
    select distinct corpus.task, corpus.dataset, contexts.context_length, corpus.label
    from {{ model }} as corpus
    inner join contexts using (task, dataset)
    inner join context_budgets as drawn_at
        on drawn_at.task = corpus.task and drawn_at.dataset = corpus.dataset
        and drawn_at.context_length = corpus.min_context
    inner join context_budgets as wanted
        on wanted.task = contexts.task and wanted.dataset = contexts.dataset
        and wanted.context_length = contexts.context_length
    where corpus.task = 'icl' and drawn_at.budget <= wanted.budget
)

select pool_classes.task, pool_classes.dataset, contexts.context_length, pool_classes.label
from pool_classes
inner join contexts using (task, dataset)
anti join present using (task, dataset, context_length, label)
{% endtest %}
