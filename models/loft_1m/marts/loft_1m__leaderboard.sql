{{ config(materialized='view') }}

{{ scoring_leaderboard() }}
