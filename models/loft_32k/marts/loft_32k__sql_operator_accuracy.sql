{{ scoring_sql_operator_accuracy() }}
