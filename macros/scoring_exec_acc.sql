{#
  SQL execution accuracy in SQL (python/loft_warehouse/sql/exec_accuracy.py is the reference).
  Each expression gives NULL where it cannot be sure to agree with Python, and the scoring model
  then calls loft_exec_acc for that turn: a cell that is not printable ASCII text, a JSON
  number or a boolean or null (float() takes Unicode digits and whitespace, str() of a nested
  list is its repr); a number outside +-1e12 or one that rounds to a negative zero (two-decimal
  formatting); text with an underscore that may be a number (float('1_0') is 10.0); a row of a
  shape Python reads as characters or cannot iterate; an empty row; and, under the strict rule,
  a mismatch that a column permutation could still resolve.
#}

{# An answer's rows as JSON values (LOFT's shape rule: a list whose first item is not a list is
   one row); [] for anything that is not a list; NULL for a mix of lists and other items, or a
   flat row holding a list or an object. #}
{% macro scoring_exec_rows(json_text) -%}
    case
        when json_type({{ json_text }}) <> 'ARRAY' then []::json[][]
        when json_array_length({{ json_text }}) = 0 then []::json[][]
        when list_bool_and(list_transform(from_json({{ json_text }}, '["JSON"]'),
                                          lambda item: json_type(item) = 'ARRAY'))
            then from_json({{ json_text }}, '[["JSON"]]')
        when list_bool_or(list_transform(from_json({{ json_text }}, '["JSON"]'),
                                         lambda item: json_type(item) in ('ARRAY', 'OBJECT')))
            then null
        else [from_json({{ json_text }}, '["JSON"]')]
    end
{%- endmacro %}


{# A string float() reads, printable ASCII without underscores (Python's grammar, not DuckDB's). #}
{% macro scoring_exec_number_text(text) -%}
    regexp_full_match({{ text }}, '[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?')
{%- endmacro %}


{# Text that may be a float() with underscores, left to Python. #}
{% macro scoring_exec_underscored(text) -%}
    (contains({{ text }}, '_') and regexp_full_match({{ text }}, '[0-9._eE+-]+'))
{%- endmacro %}


{# f"{value:.2f}" where DuckDB's printf surely agrees with Python's: finite, |value| < 1e12,
   and not a negative zero (text: the number as written; JSON's -0 is Python's integer 0). #}
{% macro scoring_exec_two_decimals(value, text) -%}
    case when abs({{ value }}) < 1e12 and not (abs({{ value }}) < 0.005 and starts_with({{ text }}, '-'))
         then printf('%.2f', {{ value }}) end
{%- endmacro %}


{# A JSON string cell's text: its characters, unescaped only when it holds an escape. #}
{% macro scoring_exec_string(c) -%}
    case when contains({{ c }}, '\') then {{ c }}->>'$' else substring({{ c }}, 2, length({{ c }}) - 2) end
{%- endmacro %}


{# What both rules read of one cell given as JSON text (SQL NULL for JSON null), in three steps
   so that nothing is computed twice: c, the JSON text; s, a string's characters (unescaped only
   when it holds an escape); t, s stripped; then whether s is printable ASCII, whether t is a
   float() that SQL reads alike, whether t may be one with underscores, t in lower case, and d,
   the number as a double. #}
{% macro scoring_exec_cell_read(c) -%}
    {'c': {{ c }}, 's': case when starts_with({{ c }}, '"') then {{ scoring_exec_string(c) }} end}
{%- endmacro %}

{% macro scoring_exec_cell_trimmed(x) -%}
    {'c': {{ x }}.c, 's': {{ x }}.s, 't': trim({{ x }}.s)}
{%- endmacro %}

{% macro scoring_exec_cell_parsed(x) -%}
    {
        'c': {{ x }}.c,
        's': {{ x }}.s,
        't': {{ x }}.t,
        'printable': regexp_full_match({{ x }}.s, '[\x20-\x7e]*'),
        'number': {{ scoring_exec_number_text(x ~ '.t') }},
        'underscored': {{ scoring_exec_underscored(x ~ '.t') }},
        'lower': lower({{ x }}.t),
        'd': case when {{ x }}.s is null then try_cast({{ x }}.c as double) else try_cast({{ x }}.t as double) end
    }
{%- endmacro %}


{# normalize_cell_loft of a parsed cell: a text cell is float() when it reads one, else
   stripped, lower case; told apart by the JSON text's first character. #}
{% macro scoring_exec_cell_loft(x) -%}
    case
        when {{ x }}.c is null then 'none'
        when {{ x }}.s is not null then case
            when not {{ x }}.printable then null
            when {{ x }}.number then {{ scoring_exec_two_decimals(x ~ '.d', x ~ '.t') }}
            when {{ x }}.lower in ('inf', '+inf', 'infinity', '+infinity') then 'inf'
            when {{ x }}.lower in ('-inf', '-infinity') then '-inf'
            when {{ x }}.lower in ('nan', '+nan', '-nan') then 'nan'
            when {{ x }}.underscored then null
            else {{ x }}.lower
        end
        when {{ x }}.c = 'true' then '1.00'
        when {{ x }}.c = 'false' then '0.00'
        when starts_with({{ x }}.c, '[') or starts_with({{ x }}.c, '{') then null
        else {{ scoring_exec_two_decimals(x ~ '.d', x ~ '.c') }}
    end
{%- endmacro %}


{# exec_accuracy._strict_cell of a parsed cell, as a comparable text: 'n:' and the double's
   shortest text (negative zero as zero), 't:' and the stripped text, 'z' for None; a text
   cell is a finite float() by value, anything else its stripped text. #}
{% macro scoring_exec_cell_strict(x) -%}
    case
        when {{ x }}.c is null then 'z'
        when {{ x }}.s is not null then case
            when not {{ x }}.printable then null
            when {{ x }}.number then case
                when {{ x }}.d is null then null
                when isfinite({{ x }}.d) then 'n:' || ({{ x }}.d + 0.0)::varchar
                else 't:' || {{ x }}.t
            end
            when {{ x }}.underscored then null
            else 't:' || {{ x }}.t
        end
        when {{ x }}.c = 'true' then 'n:1.0'
        when {{ x }}.c = 'false' then 'n:0.0'
        when starts_with({{ x }}.c, '[') or starts_with({{ x }}.c, '{') then null
        when abs({{ x }}.d) < 9007199254740992 then 'n:' || ({{ x }}.d + 0.0)::varchar
    end
{%- endmacro %}


{# Rows of JSON cells as both rules read them: rows of {'loft', 'strict'} texts, NULL when a row
   is empty (Python's to read); a cell's text is NULL where Python must read it. #}
{% macro scoring_exec_cells(rows) -%}
    case when {{ rows }} is not null
              and list_bool_and(list_transform({{ rows }}, lambda r: len(r) > 0) || [true])
         then list_transform({{ rows }}, lambda r: list_transform(list_transform(list_transform(list_transform(r,
                  lambda c: {{ scoring_exec_cell_read('c') }}),
                  lambda x: {{ scoring_exec_cell_trimmed('x') }}),
                  lambda x: {{ scoring_exec_cell_parsed('x') }}),
                  lambda x: {'loft': {{ scoring_exec_cell_loft('x') }}, 'strict': {{ scoring_exec_cell_strict('x') }}}))
    end
{%- endmacro %}


{# One rule's texts of rows read by scoring_exec_cells. #}
{% macro scoring_exec_rule_cells(cells, rule) -%}
    list_transform({{ cells }}, lambda r: list_transform(r, lambda x: x.{{ rule }}))
{%- endmacro %}


{# True when every cell of every row was read in SQL. #}
{% macro scoring_exec_known(cells) -%}
    coalesce(len(flatten({{ cells }})) = list_count(flatten({{ cells }})), false)
{%- endmacro %}


{# A row as the loft rule compares it: the set of its non-empty cells, sorted. #}
{% macro scoring_exec_cell_set(row) -%}
    list_sort(list_distinct(list_filter({{ row }}, lambda x: x <> '')))
{%- endmacro %}


{# exec_acc_loft from the rows' cell sets (NULL when not known): same row count and every
   predicted row's set among the gold's. A gold that is not a non-empty list of lists is
   Python's (it raises). #}
{% macro scoring_exec_acc_loft(gold_text, gold_sets, answer_sets) -%}
    case
        when json_type({{ gold_text }}, '$[0]') is distinct from 'ARRAY' or {{ gold_sets }} is null then null
        when {{ answer_sets }} is null then null
        when len({{ answer_sets }}) <> len({{ gold_sets }}) then 0.0
        else list_bool_and(list_transform({{ answer_sets }}, lambda r: list_contains({{ gold_sets }}, r)))::double
    end
{%- endmacro %}


{# exec_acc_strict: multisets of rows (lists when ordered or one row) of one width. Not equal
   as given: one column has no other order, and a permutation keeps the multiset of all cells;
   otherwise a permutation may still match: Python's. #}
{% macro scoring_exec_acc_strict(gold_cells, answer_cells, ordered) -%}
    case
        when {{ gold_cells }} is null or len({{ gold_cells }}) = 0 or {{ answer_cells }} is null then null
        when len({{ answer_cells }}) <> len({{ gold_cells }}) then 0.0
        when not list_bool_and(list_transform({{ answer_cells }} || {{ gold_cells }},
                                              lambda r: len(r) = len({{ gold_cells }}[1]))) then 0.0
        when ({{ ordered }} or len({{ gold_cells }}) = 1) and {{ answer_cells }} = {{ gold_cells }} then 1.0
        when not ({{ ordered }} or len({{ gold_cells }}) = 1)
             and list_sort({{ answer_cells }}) = list_sort({{ gold_cells }}) then 1.0
        when len({{ gold_cells }}[1]) = 1 then 0.0
        when list_sort(flatten({{ answer_cells }})) <> list_sort(flatten({{ gold_cells }})) then 0.0
    end
{%- endmacro %}


{# The relation's rows (gold_loft, answer_loft_json, gold, answer_strict_json, gold_is_ordered)
   with exec_acc_in_sql: both rules' accuracy in SQL, each NULL where Python must decide. A side
   (gold, answer) whose two rules read the same text (the usual case) is parsed and read once. #}
{% macro scoring_exec_acc_in_sql(relation) -%}
    {%- set sides = [('gold', 'gold_loft', 'gold'), ('answer', 'answer_loft_json', 'answer_strict_json')] -%}
    {%- set names = ['gold_loft', 'answer_loft', 'gold_strict', 'answer_strict'] -%}
    {#- One step per subquery, so that no step's lists are computed twice. #}
    select
        * exclude (cells_{{ names | join(', cells_') }}),
        {
            'loft': ({{ scoring_exec_acc_loft('gold_loft', 'cells_gold_loft', 'cells_answer_loft') }})::double,
            'strict': ({{ scoring_exec_acc_strict('cells_gold_strict', 'cells_answer_strict', 'gold_is_ordered') }})::double
        } as exec_acc_in_sql
    from (
        select
            * exclude (read_{{ names | join(', read_') }}),
            {%- for name in names %}
            case when {{ scoring_exec_known('read_' ~ name) }}
                 then {% if name.endswith('_loft') %}list_transform(read_{{ name }}, lambda r: {{ scoring_exec_cell_set('r') }})
                      {%- else %}read_{{ name }}{% endif %}
            end as cells_{{ name }}{{ ',' if not loop.last }}
            {%- endfor %}
        from (
            select
                * exclude (read_{{ sides | map(attribute=0) | join(', read_') }}, other_{{ sides | map(attribute=0) | join(', other_') }}),
                {%- for side, loft, strict in sides %}
                {{ scoring_exec_rule_cells('read_' ~ side, 'loft') }} as read_{{ side }}_loft,
                case when {{ strict }} is not distinct from {{ loft }}
                     then {{ scoring_exec_rule_cells('read_' ~ side, 'strict') }}
                     else {{ scoring_exec_rule_cells('other_' ~ side, 'strict') }} end as read_{{ side }}_strict
                {{- ',' if not loop.last }}
                {%- endfor %}
            from (
                select
                    * exclude (rows_{{ sides | map(attribute=0) | join(', rows_') }}, other_rows_{{ sides | map(attribute=0) | join(', other_rows_') }}),
                    {%- for side, _, _ in sides %}
                    {{ scoring_exec_cells('rows_' ~ side) }} as read_{{ side }},
                    {{ scoring_exec_cells('other_rows_' ~ side) }} as other_{{ side }}{{ ',' if not loop.last }}
                    {%- endfor %}
                from (
                    select
                        *,
                        {%- for side, loft, strict in sides %}
                        {{ scoring_exec_rows(loft) }} as rows_{{ side }},
                        case when {{ strict }} is distinct from {{ loft }} then {{ scoring_exec_rows(strict) }} end
                            as other_rows_{{ side }}{{ ',' if not loop.last }}
                        {%- endfor %}
                    from {{ relation }}
                )
            )
        )
    )
{%- endmacro %}
