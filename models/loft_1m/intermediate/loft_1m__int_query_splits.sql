{{ loft_int_query_splits() }}
