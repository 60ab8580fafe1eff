{# Every table of the database of every SQL query is in that query's corpus. #}
{% test sql_databases_complete(model, corpus, documents) %}
with

query_databases as (
    select distinct task, dataset, corpus_id from {{ model }} where task = 'sql'
),

database_tables as (
    select documents.task, documents.dataset, documents.corpus_id, documents.pid
    from {{ documents }} as documents
    semi join query_databases using (task, dataset, corpus_id)
)

select database_tables.*
from database_tables
anti join {{ corpus }} as corpus using (task, dataset, corpus_id, pid)
{% endtest %}
