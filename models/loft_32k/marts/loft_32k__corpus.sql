{{ loft_corpus() }}
