{{ loft_corpus_stats() }}
