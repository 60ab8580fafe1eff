{{ sql_gold_agreement() }}
