{{ scoring_example_curves() }}
