"""Corpus-in-Context prompts as tables (paper §3): rendering, variants, storage and export.

What other areas use:
- fill_model_answers(text, answers): put the model's earlier answers into a multi-turn row
  (apply it to `head` and `suffix`).
- prompt_text(head, prefix, suffix): the whole prompt of a row of `prompts`.
"""

from loft_warehouse.prompts.multiturn import PLACEHOLDER, fill_model_answers
from loft_warehouse.prompts.store import prompt_text

__all__ = ["PLACEHOLDER", "fill_model_answers", "prompt_text"]
