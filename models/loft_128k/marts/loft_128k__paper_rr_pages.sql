select * from {{ source('reference', 'paper_rr_pages') }}
