{{ config(materialized='view') }}
{{ loft_prompt_texts() }}
