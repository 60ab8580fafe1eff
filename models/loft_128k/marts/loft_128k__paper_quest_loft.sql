select * from {{ source('reference', 'paper_quest_loft') }}
