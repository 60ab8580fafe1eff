{#- After a run with no failure, copy the working file over the warehouse file in one step
    (python/loft_warehouse/dbt_boundary/publish.py); after a failure the warehouse file keeps the last good
    build, and the working file stays marked unpublished (loft_begin_build, at run start) so the
    next run starts from the published build. Nothing to do when dbt builds in place
    (LOFT_BUILD_IN_PLACE=1). -#}
{% macro loft_writing_command() %}
  {{ return(execute and flags.WHICH in ("build", "run", "test", "seed", "snapshot")) }}
{% endmacro %}

{% macro loft_begin_build() %}
  {% if loft_writing_command() %}
    {% do run_query("select loft_build_started(" ~ dbt.string_literal(invocation_id) ~ ", '')") %}
    {% do run_query("select loft_begin_build(" ~ dbt.string_literal(target.path) ~ ", " ~ dbt.string_literal(env_var("LOFT_DUCKDB_PATH", "loft.duckdb")) ~ ")") %}
  {% endif %}
{% endmacro %}

{% macro loft_publish(results) %}
  {% if loft_writing_command() %}
    {% set published = env_var("LOFT_DUCKDB_PATH", "loft.duckdb") %}
    {% set failed = results | selectattr("status", "in", ["error", "fail", "runtime error", "skipped"]) | list %}
    {% if failed and target.path == published %}
      {{ log("built in place with " ~ (failed | length) ~ " node(s) failed or skipped: " ~ published ~ " holds this build's tables beside the last one's", info=True) }}
    {% elif failed %}
      {{ log("not published: " ~ (failed | length) ~ " node(s) failed or were skipped; " ~ published ~ " still holds the last good build, and the next build starts from it", info=True) }}
    {% else %}
      {% do run_query("checkpoint") %}
      {% set line = run_query("select loft_publish(" ~ dbt.string_literal(target.path) ~ ", " ~ dbt.string_literal(published) ~ ")").columns[0].values()[0] %}
      {{ log(line, info=True) }}
    {% endif %}
  {% endif %}
{% endmacro %}
