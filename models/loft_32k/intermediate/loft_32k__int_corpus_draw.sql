{{ loft_int_corpus_draw() }}
