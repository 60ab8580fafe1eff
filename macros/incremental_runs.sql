{#
  Incremental models by run (int_predictions, int_turn_scores, int_metrics) or by a group of runs
  (int_position_curves: a run's variants together): each stored row keeps its run's (group's)
  fingerprint (int_run_fingerprints) in run_fingerprint. A build computes the runs whose current
  fingerprint is not stored yet and appends them; its post-hook then deletes every row whose
  fingerprint is no longer a run's current one (changed or gone). A table built before the
  column existed counts as holding nothing, so its first build recomputes every run.
#}

{# The runs (`keys`, the run key by default, and `column` as run_fingerprint) this build
   computes: those whose current fingerprint the model does not hold yet (every run on a first or
   full build, or when the table predates the column). An incremental build says in one line how
   many that is: "int_predictions: 1 of 3 run(s) to compute, the rest kept". #}
{% macro incremental_runs_to_compute(fingerprints, column, keys=['source', 'system', 'method', 'task', 'dataset', 'variant', 'split']) -%}
    {%- set holds = is_incremental()
        and 'run_fingerprint' in (adapter.get_columns_in_relation(this) | map(attribute='name') | list) -%}
    {%- set current = '(select distinct ' ~ (keys | join(', ')) ~ ', ' ~ column ~ ' from ' ~ fingerprints ~ ')' -%}
    {%- if holds -%}
        {%- set stored = '(select distinct run_fingerprint from ' ~ this ~ ' where run_fingerprint is not null)' -%}
    {%- endif -%}
    {%- if execute and holds -%}
        {%- set counts = run_query("select count(*) filter (where " ~ column ~ " not in " ~ stored ~ "), count(*) from "
                                   ~ current) -%}
        {%- do log(this.identifier ~ ": " ~ counts.columns[0].values()[0] ~ " of " ~ counts.columns[1].values()[0]
                   ~ " run(s) to compute, the rest kept", info=True) -%}
    {%- endif -%}
    select {{ keys | join(', ') }}, {{ column }} as run_fingerprint
    from {{ current }}
    {%- if holds %}
    where {{ column }} not in {{ stored }}
    {%- endif %}
{%- endmacro %}


{# A group's rows as the landed files they were read from: how many, and which fingerprints
   (`column`), standing for a digest of the rows themselves (loft_rows_digest). #}
{% macro incremental_landed_digest(column) -%}
    count(*)::varchar || ':' || string_agg(distinct {{ column }}, ',' order by {{ column }})
{%- endmacro %}


{# The post-hook: drop the rows whose fingerprint is not `column` of any run in `fingerprints`. #}
{% macro incremental_drop_stale_runs(fingerprints, column) -%}
    delete from {{ this }}
    where run_fingerprint is null or run_fingerprint not in (select {{ column }} from {{ fingerprints }})
{%- endmacro %}


{# The post-hook of an incremental Python model: dbt-duckdb leaves the table an incremental run of
   a Python model appends from (<model>__dbt_tmp<timestamp>) in the warehouse; drop it. #}
{% macro incremental_drop_python_staging() -%}
    {%- set found = run_query("select schema_name, table_name from duckdb_tables() where database_name = '"
                              ~ this.database ~ "' and not temporary and starts_with(table_name, '"
                              ~ this.identifier ~ "__dbt_tmp')") if execute else none -%}
    {%- if found and found.rows | length > 0 -%}
        {%- for row in found.rows %}drop table "{{ row[0] }}"."{{ row[1] }}";{% endfor -%}
    {%- else -%}
        select 1
    {%- endif -%}
{%- endmacro %}
