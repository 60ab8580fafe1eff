-- depends_on: {{ ref('loft_32k__scores') }}
-- depends_on: {{ ref('loft_128k__scores') }}
-- depends_on: {{ ref('loft_1m__scores') }}
{{ scoring_scaling_scores(compare_built_sizes('scores')) }}
