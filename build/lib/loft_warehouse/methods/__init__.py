"""Methods: chains of stages (one-call corpus in context, retrieve-then-read, ICR, R&R, chunked
ICR, QUEST-LOFT justified QA with verification) and how each stage's prompts are built and read."""
