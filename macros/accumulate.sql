{#
  Runs add up (docs/reliability.md, "What a build keeps"): a table whose rows a build's selection
  decides (datasets, variants, methods, systems, limit) keeps, beside what this build computed,
  every partition of its previous contents that this build did not compute. The post-hook runs
  inside the table materialisation's transaction, while the previous table still stands as its
  backup relation; `keys` name a partition. `stamp` names a column set to this build's
  invocation_id on the rows it computed (carried rows keep theirs), so a later model can tell
  this build's partitions from carried ones. `prefer`, an aggregate over a partition's rows,
  keeps the previous contents of a partition this build also computed when they score higher
  (a run's answered responses: a quick try never displaces the full run it is a part of, nor an
  unset key a paid run). Removing a partition is `loft forget`.
#}
{% macro loft_keep_unbuilt(keys, stamp=none, prefer=none) -%}
    {%- if not execute -%}
        {{- return('select 1') -}}
    {%- endif -%}
    {%- set statements = [] -%}
    {%- if stamp -%}
        {%- do statements.append('update ' ~ this ~ ' set ' ~ stamp ~ " = '" ~ invocation_id ~ "'") -%}
    {%- endif -%}
    {%- set backup = make_backup_relation(this, 'table') -%}
    {%- set previous = adapter.get_relation(database=backup.database, schema=backup.schema,
                                            identifier=backup.identifier) -%}
    {%- if previous is not none -%}
        {%- set built_columns = adapter.get_columns_in_relation(this) | map(attribute='name') | list -%}
        {%- set previous_columns = adapter.get_columns_in_relation(previous) | map(attribute='name') | list -%}
        {%- set shared = built_columns | select('in', previous_columns) | list -%}
        {%- if keys | reject('in', previous_columns) | list | length > 0 -%}
            {{- exceptions.raise_compiler_error(this ~ ': the previous table has no column ' ~ keys | reject('in', previous_columns) | join(', ') ~ ' to keep its unselected rows by; rebuild it with --full-refresh after `loft forget`') -}}
        {%- endif -%}
        {%- set columns = shared | map('tojson') | join(', ') -%}
        {%- set key_list = '"' ~ (keys | join('", "')) ~ '"' -%}
        {%- set score = prefer if prefer else '0' -%}
        {%- set matched = [] -%}
        {%- for key in keys -%}
            {%- do matched.append('built."' ~ key ~ '" is not distinct from kept."' ~ key ~ '"') -%}
        {%- endfor -%}
        {%- do statements.append('create or replace temp table loft_built_keys as select ' ~ key_list ~ ', '
            ~ score ~ ' as score from ' ~ this ~ ' group by all') -%}
        {%- do statements.append('create or replace temp table loft_kept_keys as select kept.*, built.score as built_score from (select '
            ~ key_list ~ ', ' ~ score ~ ' as score from ' ~ previous ~ ' group by all) as kept left join loft_built_keys as built on '
            ~ (matched | join(' and ')) ~ ' where built.score is null or kept.score > built.score') -%}
        {%- do statements.append('delete from ' ~ this ~ ' as built using loft_kept_keys as kept where '
            ~ (matched | join(' and ')) ~ ' and kept.built_score is not null') -%}
        {%- do statements.append('insert into ' ~ this ~ ' (' ~ columns ~ ') select ' ~ columns ~ ' from ' ~ previous
            ~ ' as kept semi join loft_kept_keys as built on ' ~ (matched | join(' and '))) -%}
        {%- do statements.append('drop table loft_built_keys') -%}
        {%- do statements.append('drop table loft_kept_keys') -%}
    {%- endif -%}
    {{- (statements | join(';\n')) if statements else 'select 1' -}}
{%- endmacro %}


{# What a prompt row sends, as one digest: a response stores it, and `responses` marks a response
   whose prompt has changed since (a new corpus, gold or rendering) as stale. #}
{% macro loft_prompt_digest(rows) -%}
    md5(concat_ws(chr(0), {{ rows }}.prefix_id, {{ rows }}.head, array_to_string({{ rows }}.segment_ids, ','),
                  {{ rows }}.suffix))::varchar
{%- endmacro %}


{# A run's answered responses (ok or blocked: a reply was stored), the `prefer` of the response
   tables: the contents of a run with more of them are kept. #}
{% macro loft_answered_rows() -%}
    count(*) filter (where status in ('ok', 'blocked'))
{%- endmacro %}
