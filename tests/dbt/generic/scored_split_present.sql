{# A dataset whose size takes a test split (datasets.n_test > 0) has test queries: a split that
   ends up empty would leave the dataset with nothing to score, without a word. #}
{% test scored_split_present(model, datasets) %}
with

expected as (
    select task, dataset from {{ datasets }} where n_test > 0
),

present as (
    select distinct task, dataset from {{ model }} where split = 'test'
)

select task, dataset from expected
anti join present using (task, dataset)
{% endtest %}
