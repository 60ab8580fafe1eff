{{ scoring_cost_ledger() }}
