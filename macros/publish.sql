{#- After a run with no failed node, copy the working file over the warehouse file in one step
    (python/loft_warehouse/publish.py); after a failure the warehouse file keeps the last good
    build. Nothing to do when dbt builds in place (LOFT_BUILD_IN_PLACE=1). -#}
{% macro loft_publish(results) %}
  {% if execute and flags.WHICH in ("build", "run", "test", "seed", "snapshot") %}
    {% set published = env_var("LOFT_DUCKDB_PATH", "loft.duckdb") %}
    {% set failed = results | selectattr("status", "in", ["error", "fail", "runtime error", "skipped"]) | list %}
    {% if failed %}
      {{ log("not published: " ~ (failed | length) ~ " node(s) failed or were skipped; " ~ published ~ " still holds the last good build", info=True) }}
    {% else %}
      {% do run_query("checkpoint") %}
      {% set line = run_query("select loft_publish(" ~ dbt.string_literal(target.path) ~ ", " ~ dbt.string_literal(published) ~ ")").columns[0].values()[0] %}
      {{ log(line, info=True) }}
    {% endif %}
  {% endif %}
{% endmacro %}
