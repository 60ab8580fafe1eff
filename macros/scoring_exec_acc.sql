{#
  SQL execution accuracy in SQL where SQL decides it exactly, the Python scorer
  (loft_exec_acc: sql/exec_accuracy.py, the reference) everywhere else.

  SQL takes a turn when both sides are lists of rows whose cells are JSON null, booleans,
  numbers below 1e15 in magnitude, or printable-ASCII strings that are either a plain decimal
  (what float() and DuckDB's cast read alike) or outside float()'s grammar altogether (text to
  both rules); DuckDB's printf('%.2f') is Python's '%.2f' there. Under the strict rule SQL also
  stops at a row multiset that differs with the columns as given when a column permutation
  could still match (width > 1 and the same bag of cells): the Python column search decides
  those. Any other turn (nested cells, non-ASCII or float-like text such as 'nan' or '1_000',
  string rows, odd golds) goes to Python whole. Each distinct JSON text, row and cell is read
  once, a row per cell (DuckDB's lambdas over nested lists cost more than the Python).
#}

{#
  A cell's value under each rule from its JSON type (kind), its text (v: a string's value, a
  number's digits) and, for a string, is_plain (printable ASCII), number (the value of a plain
  decimal) and is_text (outside float()'s grammar); NULL where SQL cannot say.
#}
{% macro scoring_exec_acc_cell_key(rule) -%}
    case kind
        when 'NULL' then {{ "'none'" if rule == 'loft' else "'z'" }}
        when 'BOOLEAN' then {{ "case when v = 'true' then '1.00' else '0.00' end" if rule == 'loft'
                               else "'n' || ((v = 'true')::int::double + 0.0)::varchar" }}
        when 'VARCHAR' then
            case
                when not is_plain then null
                when trim(v, ' ') = '' then {{ "''" if rule == 'loft' else "'t'" }}
                when number is not null then
                    {{ "case when abs(number) < 1e15 then printf('%.2f', number) end" if rule == 'loft'
                       else "case when isfinite(number) then 'n' || (number + 0.0)::varchar end" }}
                when is_text then {{ "lower(trim(v, ' '))" if rule == 'loft' else "'t' || trim(v, ' ')" }}
            end
        when 'BIGINT' then {{ scoring_exec_acc_number_key(rule) }}
        when 'UBIGINT' then {{ scoring_exec_acc_number_key(rule) }}
        when 'DOUBLE' then {{ scoring_exec_acc_number_key(rule) }}
    end
{%- endmacro %}


{% macro scoring_exec_acc_number_key(rule) -%}
    case when abs(number) < 1e15 then
        {{ "printf('%.2f', number)" if rule == 'loft' else "'n' || (number + 0.0)::varchar" }}
    end
{%- endmacro %}


{#
  `relation` with acc = {loft, strict} for every answered row (is_answered) from gold_loft /
  answer_loft_json (loft rule) and gold / answer_strict_json / gold_is_ordered (strict rule),
  and fast_acc, the part SQL decided (NULL where the Python scorer ran).
#}
{% macro scoring_exec_acc(relation) %}
with

texts as materialized (
    select j, row_number() over () as text_id
    from (
        select distinct j
        from (
            select unnest([gold_loft, answer_loft_json, gold, answer_strict_json]) as j
            from {{ relation }}
            where is_answered
        )
        where j is not null
    )
),

{#- Rows as upstream shapes an answer: not a list = no rows, a list whose first item is not a
    list = one row. A gold is scored here only as a non-empty list of lists ('rows'). #}
shaped as (
    select
        text_id,
        case
            when json_type(j) <> 'ARRAY' then 'other'
            when json_array_length(j) = 0 then 'empty'
            when json_type(j, '$[0]') = 'ARRAY' then 'rows'
            else 'flat'
        end as shape,
        case shape when 'rows' then json_extract(j, '$[*]') when 'flat' then [j::json] else []::json[] end as row_list
    from texts
),

row_items as (
    select text_id, unnest(row_list)::varchar as row_text, unnest(range(len(row_list))) as row_index
    from shaped
),

{#- Rows repeat too (a prediction mostly restates gold rows): each distinct one is keyed once. #}
row_values as materialized (
    select row_text, row_number() over () as row_id, json_type(row_text) = 'ARRAY' as row_is_list
    from (select distinct row_text from row_items)
),

cells as (
    select
        row_id,
        unnest(json_extract(row_text, '$[*]'))::varchar as cell,
        unnest(range(json_array_length(row_text)::bigint)) as cell_index
    from row_values
    where row_is_list
),

{#- Cells repeat (names, numbers, NULL): each distinct one is read and keyed once. #}
cell_values as materialized (
    select cell, json_type(cell) as kind, cell ->> '$' as v
    from (select distinct cell from cells)
),

read_cells as (
    select
        *,
        kind = 'VARCHAR' and regexp_full_match(v, '[ -~]*') as is_plain,
        case
            when kind in ('BIGINT', 'UBIGINT', 'DOUBLE') then try_cast(v as double)
            when is_plain and regexp_full_match(v, ' *[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)? *')
                then try_cast(trim(v, ' ') as double)
        end as number,
        is_plain and not regexp_full_match(
            v, '(?i) *[+-]?(([0-9](_?[0-9])*)?([.]([0-9](_?[0-9])*)?)?(e[+-]?[0-9](_?[0-9])*)?|inf|infinity|nan) *'
        ) as is_text
    from cell_values
),

cell_keys as (
    select
        cell,
        {{ scoring_exec_acc_cell_key('loft') }} as loft_key,
        {{ scoring_exec_acc_cell_key('strict') }} as strict_key
    from read_cells
),

{#- Per row: loft's set of non-empty keys and strict's keys in column order, each as one text
    (keys are printable ASCII, so chr(1) cannot occur in them), and whether SQL could key every
    cell. list() with ORDER BY sorts each small group on its own, far slower than sorting
    (index, key) structs afterwards. #}
row_keys as (
    select
        row_id,
        coalesce(array_to_string(list_sort(list_distinct(list(loft_key) filter (where loft_key <> ''))), chr(1)), '')
            as loft_set,
        list_transform(list_sort(list({'i': cell_index, 'key': strict_key})), lambda k: k.key) as strict_keys,
        count(*) filter (where loft_key is null or strict_key is null) = 0 as is_keyed
    from cells
    inner join cell_keys using (cell)
    group by row_id
),

text_rows as (
    select
        items.text_id,
        items.row_index,
        row_values.row_is_list and coalesce(keys.is_keyed, true) as is_keyed,
        coalesce(keys.loft_set, '') as loft_set,
        coalesce(keys.strict_keys, []) as strict_keys
    from row_items as items
    inner join row_values using (row_text)
    left join row_keys as keys using (row_id)
),

{#- Per text: loft's row sets, strict's row tuples (in row order), the row widths and the
    sorted cells. #}
parsed as materialized (
    select
        texts.j,
        shaped.shape,
        coalesce(bool_and(text_rows.is_keyed), true) as is_keyed,
        list(text_rows.loft_set) filter (where text_rows.text_id is not null) as sets,
        list_transform(
            list_sort(list({'i': text_rows.row_index, 'tuple': array_to_string(text_rows.strict_keys, chr(1))})
                      filter (where text_rows.text_id is not null)),
            lambda r: r.tuple
        ) as tuples,
        list(len(text_rows.strict_keys)) filter (where text_rows.text_id is not null) as widths,
        list_sort(flatten(list(text_rows.strict_keys) filter (where text_rows.text_id is not null))) as cells
    from shaped
    left join text_rows using (text_id)
    inner join texts using (text_id)
    group by shaped.text_id, texts.j, shaped.shape
),

decided as (
    select
        base.*,
        case
            when not (gold_loft.shape = 'rows' and gold.shape = 'rows' and gold_loft.is_keyed and gold.is_keyed
                      and answer_loft.is_keyed and answer_strict.is_keyed) then null
            when len(coalesce(answer_loft.sets, [])) <> len(gold_loft.sets) then 0.0
            else list_has_all(gold_loft.sets, answer_loft.sets)::double
        end as fast_loft,
        case
            when not (gold_loft.shape = 'rows' and gold.shape = 'rows' and gold_loft.is_keyed and gold.is_keyed
                      and answer_loft.is_keyed and answer_strict.is_keyed) then null
            when len(coalesce(answer_strict.tuples, [])) <> len(gold.tuples) then 0.0
            when list_unique(answer_strict.widths || gold.widths) > 1 then 0.0
            when coalesce(base.gold_is_ordered, false) and answer_strict.tuples = gold.tuples then 1.0
            when not coalesce(base.gold_is_ordered, false)
                 and list_sort(answer_strict.tuples) = list_sort(gold.tuples) then 1.0
            when gold.widths[1] = 1 then 0.0
            when answer_strict.cells <> gold.cells then 0.0
        end as fast_strict
    from {{ relation }} as base
    left join parsed as gold_loft on gold_loft.j = base.gold_loft
    left join parsed as answer_loft on answer_loft.j = base.answer_loft_json
    left join parsed as gold on gold.j = base.gold
    left join parsed as answer_strict on answer_strict.j = base.answer_strict_json
),

final as (
    select
        * exclude (fast_loft, fast_strict),
        case when fast_strict is not null then {'loft': fast_loft, 'strict': fast_strict} end as fast_acc,
        case
            when not is_answered then null
            when fast_strict is not null then {'loft': fast_loft, 'strict': fast_strict}
            else loft_exec_acc(gold_loft, answer_loft_json, gold, answer_strict_json, coalesce(gold_is_ordered, false))
        end as acc
    from decided
)

select * from final
{% endmacro %}
