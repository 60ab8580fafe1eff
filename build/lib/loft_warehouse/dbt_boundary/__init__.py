"""Everything dbt calls into, in one place.

- models.py: the body of every Python model that is more than a call with its refs: each takes
  the model's `loft` settings (dbt_project.yml; dbt hands a Python model only the config keys its
  own file reads, so each model file reads `loft` and `loft_size` itself) and its relations.
- plugin.py: the dbt-duckdb plugin named in profiles.yml: the scoring functions on every
  connection, the memory limit, the run hooks, Ctrl-C for Python models, errors in one line.
- preflight.py and publish.py: the on-run-start check of every setting, and the on-run-end
  publish of a successful build.
- build.py: `loft build`, which checks the same settings before dbt starts and runs dbt in the
  project folder.

One computation several models read (staging's frames, a size's prompt tables) is made once per
dbt run: frame_cache.SharedInProcess says what keys it and how long it lives.
"""
