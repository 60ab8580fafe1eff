{{ loft_queries() }}
