{{ scoring_rr_pages() }}
