{#- Checks every setting before the first model (python/loft_warehouse/preflight.py): the same
    vars, with the same environment fallbacks, as dbt_project.yml and the inference yml pass to
    the models. A bad one stops the run here, in one line. -#}
{% macro loft_preflight() %}
  {% if execute %}
    {% set values = {
      "data_dir": var("data_dir", env_var("LOFT_DATA_DIR", "")),
      "tokenizer_model": var("tokenizer_model", env_var("LOFT_TOKENIZER_MODEL", "")),
      "seed": var("seed", 20240612),
      "datasets": var("datasets", env_var("LOFT_DATASETS", "")),
      "methods": var("methods", env_var("LOFT_METHODS", "cic")),
      "prompt_variants": var("prompt_variants", ["default"]),
      "litm_documents": var("litm_documents", ""),
      "litm_positions": var("litm_positions", ""),
      "kv_positions": var("kv_positions", ""),
      "rr_lengths": var("rr_lengths", ""),
      "rr_step": var("rr_step", ""),
      "reprompt_every": var("reprompt_every", ""),
      "icr_pages": var("icr_pages", ""),
      "chunk_tokens": var("chunk_tokens", ""),
      "verify_candidates": var("verify_candidates", ""),
      "limit": var("limit", env_var("LOFT_LIMIT", "")),
      "systems": var("systems", env_var("LOFT_SYSTEMS", "")),
      "systems_file": var("systems_file", env_var("LOFT_SYSTEMS_FILE", "")),
      "max_cost_usd": var("max_cost_usd", env_var("LOFT_MAX_COST_USD", "")),
      "retry_errors": var("retry_errors", env_var("LOFT_RETRY_ERRORS", "false")),
      "batch": var("batch", env_var("LOFT_BATCH", "")),
    } %}
    {% set sql -%}
      select loft_preflight({{ dbt.string_literal(tojson(values)) }}, {{ dbt.string_literal(tojson(selected_resources)) }})
    {%- endset %}
    {% set problem = run_query(sql).columns[0].values()[0] %}
    {% if problem %}
      {{ exceptions.raise_compiler_error(problem) }}
    {% endif %}
  {% endif %}
{% endmacro %}
