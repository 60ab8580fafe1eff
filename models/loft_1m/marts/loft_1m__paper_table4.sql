select * from {{ source('reference', 'paper_table4') }}
