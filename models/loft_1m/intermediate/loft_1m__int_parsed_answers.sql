{{ scoring_parsed_answers() }}
