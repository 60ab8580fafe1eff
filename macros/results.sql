{#
  Each build ends by printing what it found: the on-run-start hook keeps every size's primary
  metrics as they stood (main.loft_results_before), and the on-run-end hook prints, for a build
  with no failure, the primary metrics it added or changed, one row per run and split, the
  paper's Table 2 value beside (the system's own paper row where it is one of the paper's
  models, else Gemini 1.5 Pro's), marked where the run's answer health is flagged (the share of
  its calls with no usable answer), or one line when nothing changed. The snapshot table is
  dropped before the build is published.
#}
{% macro loft_relation_exists(schema, name) %}
  {%- set sql = "select count(*) from duckdb_tables() where database_name = current_database() and schema_name = '"
      ~ schema ~ "' and table_name = '" ~ name ~ "'" -%}
  {{- return(run_query(sql).columns[0].values()[0] > 0) -}}
{% endmacro %}


{% macro loft_result_sizes() %}
  {%- set found = [] -%}
  {%- for size in ['32k', '128k', '1m'] -%}
    {%- if loft_relation_exists('loft_' ~ size, 'metrics') -%}
      {%- do found.append(size) -%}
    {%- endif -%}
  {%- endfor -%}
  {{- return(found) -}}
{% endmacro %}


{% macro loft_result_rows(sizes) -%}
  {%- for size in sizes %}
    {% if not loop.first %}union all{% endif %}
    select size, source, system, method, task, dataset, variant, split, metric, rule, gold_version, n, n_unanswered,
           mean, ci_low, ci_high, query_limit
    from loft_{{ size }}.metrics
    where is_primary and run_status = 'scored'
  {%- endfor %}
  {%- if not sizes %}
    select null::varchar as size, null::varchar as source, null::varchar as system, null::varchar as method,
           null::varchar as task, null::varchar as dataset, null::varchar as variant, null::varchar as split,
           null::varchar as metric, null::varchar as rule, null::varchar as gold_version, null::bigint as n,
           null::bigint as n_unanswered, null::double as mean, null::double as ci_low, null::double as ci_high,
           null::bigint as query_limit
    where false
  {%- endif %}
{%- endmacro %}


{% macro loft_snapshot_results() %}
  {% if loft_writing_command() %}
    {% do run_query('create or replace table main.loft_results_before as ' ~ loft_result_rows(loft_result_sizes())) %}
  {% endif %}
{% endmacro %}


{% macro loft_report_results(results) %}
  {% if loft_writing_command() %}
    {% set failed = results | selectattr("status", "in", ["error", "fail", "runtime error", "skipped"]) | list %}
    {% if not failed and loft_relation_exists('main', 'loft_results_before') %}
      {% set sizes = loft_result_sizes() %}
      {% set paper = [] %}
      {% if '128k' in sizes and loft_relation_exists('loft_128k', 'paper_table2') %}
        {% do paper.append(1) %}
      {% endif %}
      {% set sql %}
        with
        after as (select * from ({{ loft_result_rows(sizes) }})),
        changed as (
            select *, false as removed from (select * from after except select * from main.loft_results_before)
            union all
            select *, true as removed from (
                select * from main.loft_results_before as before
                anti join after using (size, source, system, method, task, dataset, variant, split, metric, rule,
                                       gold_version)
            )
        ),
        {%- if paper %}
        paper as (
            select task, dataset, metric, model, value from loft_128k.paper_table2
        ),
        {%- endif %}
        health as (
          {%- for size in sizes %}
            {% if not loop.first %}union all{% endif %}
            select distinct size, source, system, method, task, dataset, variant, split, no_answer_share, is_health_flagged
            from loft_{{ size }}.metrics
          {%- endfor %}
          {%- if not sizes %}
            select null::varchar as size, null::varchar as source, null::varchar as system, null::varchar as method,
                   null::varchar as task, null::varchar as dataset, null::varchar as variant, null::varchar as split,
                   null::double as no_answer_share, null::boolean as is_health_flagged
            where false
          {%- endif %}
        ),
        rows as (
            select
                changed.*,
                health.no_answer_share,
                coalesce(health.is_health_flagged and not changed.removed, false) as is_health_flagged,
                {%- if paper %}
                (select coalesce(max(p.value) filter (where lower(replace(p.model, ' ', '-')) = changed.system),
                                 max(p.value) filter (where p.model = 'Gemini 1.5 Pro'))
                 from paper as p
                 where changed.size = '128k' and p.task = changed.task and p.dataset = changed.dataset
                   and p.metric = changed.metric) as paper_value
                {%- else %}
                null::double as paper_value
                {%- endif %}
            from changed
            left join health using (size, source, system, method, task, dataset, variant, split)
        )
        select
            format('{:<26} {:<5} {:<24} {:<5} {:<14} {:>6} {:<15} {:>5} {:>5} {:<13} {:>6}',
                   left(system || case when method <> 'cic' or variant <> 'default'
                                       then ' [' || method || ', ' || variant || ']' else '' end, 26),
                   size, left(task || '/' || dataset, 24), split, left(metric, 14), printf('%.3f', mean),
                   case when ci_low is null then '' else printf('[%.2f, %.2f]', ci_low, ci_high) end,
                   n::varchar, n_unanswered::varchar,
                   trim(case when removed then 'removed ' else '' end
                        || case when source in ('import', 'planted') then source when source = 'dry_run' then 'dry run' else '' end
                        || case when query_limit is not null then ' quick ' || query_limit else '' end
                        || case when is_health_flagged
                                then ' no answer ' || round(100 * no_answer_share)::int || '%' else '' end),
                   coalesce(printf('%.2f', paper_value), '')) as line
        from rows
        order by size, task, dataset, system, method, variant, split desc
      {% endset %}
      {% set lines = run_query(sql).columns[0].values() %}
      {% if lines | length == 0 %}
        {{ loft_show_results("results: nothing changed; the published tables hold the same means as before (select * from loft_<size>.leaderboard)") }}
      {% else %}
        {% set table = ["results: " ~ (lines | length) ~ " primary metric(s) added, changed or removed by this build", loft_result_header()] + (lines[:60] | list) %}
        {% if lines | length > 60 %}
          {% do table.append("... and " ~ (lines | length - 60) ~ " more: select * from loft_<size>.metrics where is_primary") %}
        {% endif %}
        {{ loft_show_results(table | join("\n")) }}
      {% endif %}
    {% endif %}
    {% do run_query('drop table if exists main.loft_results_before') %}
  {% endif %}
{% endmacro %}


{#- Logged here, or held for `loft build` to print after dbt's lines (current_build.hold_results). -#}
{% macro loft_show_results(text) %}
  {% set shown = run_query("select loft_hold_results(" ~ dbt.string_literal(text) ~ ", '')").columns[0].values()[0] %}
  {% if shown %}
    {{ log(shown, info=True) }}
  {% endif %}
{% endmacro %}


{% macro loft_result_header() -%}
  {{- '%-26s %-5s %-24s %-5s %-14s %6s %-15s %5s %5s %-13s %6s' | format('system', 'size', 'dataset', 'split', 'metric', 'value', '95% interval', 'n', 'unans', 'marks', 'paper') -}}
{%- endmacro %}
