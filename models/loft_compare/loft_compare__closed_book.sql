{{ scoring_closed_book(ref('loft_compare__scaling_scores'), ref('loft_compare__sizes'), source('reference', 'paper_table3')) }}
