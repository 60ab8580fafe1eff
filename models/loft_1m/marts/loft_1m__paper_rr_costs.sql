select * from {{ source('reference', 'paper_rr_costs') }}
