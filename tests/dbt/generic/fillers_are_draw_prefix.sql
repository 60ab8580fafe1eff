{#
  Nesting contract, checkable inside one size: the random fillers of each corpus are exactly
  ranks 0..n-1 of the size-independent seeded draw, so a smaller size's fillers are a prefix of a
  larger size's fillers (and its gold a subset of the larger size's gold).
#}
{% test fillers_are_draw_prefix(model) %}
select task, dataset, corpus_id, count(*) as n_fillers, count(distinct draw_rank) as n_ranks, min(draw_rank) as first_rank, max(draw_rank) as last_rank
from {{ model }}
where draw_rank is not null
group by all
having min(draw_rank) <> 0 or max(draw_rank) <> count(*) - 1 or count(distinct draw_rank) <> count(*)
{% endtest %}
