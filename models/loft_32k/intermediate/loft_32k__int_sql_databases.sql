{{ loft_int_sql_databases() }}
