{#
  Each owed answer's generation parsed under both rules. The parse functions run in Python and
  a view could evaluate them once per use of each struct field, so its one reader, the
  predictions model, reads it into a materialized CTE. Only answered rows (status ok) with a
  generation are parsed.
#}
select
    *,
    case when status = 'ok' and given_answers is null
        then loft_parse_response(raw_text, 'loft', task, method, stage, payload) end as parsed_loft,
    case when status = 'ok' and given_answers is null
        then loft_parse_response(raw_text, 'strict', task, method, stage, payload) end as parsed_strict
from {{ view_ref('loft_128k__int_prediction_rows') }}
