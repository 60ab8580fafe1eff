"""The sweep variants of the positional studies: one prompt variant per point of a paper's sweep.

- litm/nq_multidoc (seed 004): `closed_book`, `oracle`, and for every k of `litm_documents`
  and gold index i: `docs{k}_gold{i}` and `docs{k}_gold{i}_query_aware`. Default indices are the
  paper's: 0, 4, 9, ..., k - 1.
- litm/kv_retrieval: for an item of n pairs, `keys{n}_gold{i}` and `keys{n}_gold{i}_query_aware`;
  default indices the paper's quarter points (75 keys: 0, 18, 37, 55, 74; 140 keys: 0, 34, 69,
  104, 139).
- rr/* (seed 001): one document per length d of `rr_lengths` that the question's corpus holds;
  NQ places the answer passage about x tokens in for x = 0, rr_step, ..., <= d
  (`d{d}_x{x}`), HotpotQA spreads its gold passages evenly (`d{d}`), as the paper does.
"""

from __future__ import annotations

from dataclasses import replace

from loft_warehouse.design import Design
from loft_warehouse.prompts.inputs import Collection
from loft_warehouse.prompts.variants import Variant

KV_DATASETS = frozenset({"kv_retrieval"})
SPREAD_GOLD_DATASETS = frozenset({"hotpotqa"})


def tokens_label(n: int) -> str:
    """10000 -> '10k' (exact thousands), else the number."""
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


def litm_positions(k: int, design: Design) -> list[int]:
    """Gold indices for k documents: the design's (those below k), else 0, 4, 9, ..., k - 1."""
    if design.litm_positions is not None:
        return sorted({p for p in design.litm_positions if p < k})
    return sorted({0, k - 1, *(5 * j - 1 for j in range(1, k // 5 + 1))})


def kv_positions(n: int, design: Design) -> list[int]:
    """Queried-key indices for n pairs: the design's (those below n), else the quarter points."""
    if design.kv_positions is not None:
        return sorted({p for p in design.kv_positions if p < n})
    return sorted({j * (n - 1) // 4 for j in range(5)})


def _both_orders(base: Variant) -> list[Variant]:
    return [base, replace(base, name=f"{base.name}_query_aware", query_aware=True)]


def variants_for(collection: Collection, design: Design) -> list[Variant]:
    """Every sweep variant that applies to one study question's corpus."""
    docs = collection.docs
    if collection.task == "litm" and collection.dataset in KV_DATASETS:
        n = len(docs)
        return [
            variant
            for i in kv_positions(n, design)
            for variant in _both_orders(Variant(f"keys{n}_gold{i}", family="litm_kv", n_documents=n, gold_index=i))
        ]
    if collection.task == "litm":
        found = [
            Variant("closed_book", family="litm_qa", setting="closed_book", n_documents=0),
            Variant("oracle", family="litm_qa", setting="oracle", n_documents=1, gold_index=0),
        ]
        for k in design.litm_documents:
            if k > len(docs):
                continue
            for i in litm_positions(k, design):
                found += _both_orders(Variant(f"docs{k}_gold{i}", family="litm_qa", n_documents=k, gold_index=i))
        return found
    if collection.task == "rr":
        available = sum(d.n_tokens for d in docs)
        found = []
        for d in sorted(set(design.rr_lengths)):
            if d > available:
                continue
            if collection.dataset in SPREAD_GOLD_DATASETS:
                found.append(Variant(f"d{tokens_label(d)}", family="rr", document_tokens=d))
                continue
            found += [
                Variant(f"d{tokens_label(d)}_x{tokens_label(x)}", family="rr", document_tokens=d, answer_tokens=x)
                for x in range(0, d + 1, design.rr_step)
            ]
        return found
    return []
