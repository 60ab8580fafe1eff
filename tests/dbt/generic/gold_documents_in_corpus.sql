{# Every gold pid of every split query of this size is a document of the query's corpus. #}
{% test gold_documents_in_corpus(model, corpus) %}
with

gold as (
    select distinct task, dataset, corpus_id, qid, unnest(gold_pids) as pid
    from {{ model }}
    where task in ('retrieval', 'rag', 'litm', 'rr')
)

select gold.*
from gold
anti join {{ corpus }} as corpus using (task, dataset, corpus_id, pid)
{% endtest %}
