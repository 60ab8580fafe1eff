"""LIB-dialogue: many-shot relation classification over DialogRE dialogues.

LOFT takes this task from LongICLBench (LIB), which shows a DialogRE dialogue with entity pairs
and asks for the relation type of each pair; LOFT scores it by accuracy (paper §4, App. A).

Framing here: one example = one dialogue plus one entity pair (subject x, object y). The input
is the dialogue, the pair and the question; the target is the pair's relation labels joined by
spaces (labels contain none), so gold = target.split(" ") accepts any true relation of the pair
(5% of pairs carry 2-4) and ICL scoring stays exact match of one answer, as for BBH. The label,
used for class coverage, is the pair's first relation. As in LongICLBench and LOFT's label list,
"unanswerable" is not a class: pairs annotated only "unanswerable" are no examples. A pair
annotated twice in one dialogue (once in test) is one example with the union of its relations.

Pool (shots): every answerable pair of DialogRE train + dev, so that all 36 relation classes can
appear (per:place_of_birth and gpe:births_in_place occur only in dev). Queries: every answerable
pair of DialogRE test; these are exactly the pairs of LongICLBench's processed test set
(raw/longiclbench/test_dialogueRE.json), whose relation (the first one) is among our gold.

Difference from upstream: LOFT's prompt code renders one shot per dialogue with all of its
pairs and one relation line per pair, and Table 5's 1m count (1,059 shots) is close to the
1,072 train dialogues with an answerable pair. Shots per pair keep the warehouse's single-target
ICL contract; context shot counts are therefore not comparable one-to-one with Table 5.

Rows (source_row, error positions) are 1-based positions of dialogues in a file; pids and qids
are f"dialogre-{split}-{dialogue}-{pair}" with 0-based positions.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loft_warehouse.errors import BadInputError, ConfigurationError
from loft_warehouse.readers import read_json
from loft_warehouse.registry import DatasetSpec
from loft_warehouse.sources.base import Document, Query, SourceData

RELATIVE_DIR = Path("raw/dialogre/en")
POOL_SPLITS = ("train", "dev")
QUERY_SPLIT = "test"
NO_RELATION = "unanswerable"


@dataclass(frozen=True)
class PairExample:
    """One (dialogue, subject, object) with its relations, as read from a DialogRE file."""

    example_id: str
    dialogue: str
    subject: str
    object: str
    relations: tuple[str, ...]
    path: Path
    row: int

    @property
    def input(self) -> str:
        """What the model sees before `Output:`."""
        return (
            f"Dialogue:\n{self.dialogue}\nSubject: {self.subject}\nObject: {self.object}\n"
            "Which relation does the subject have to the object?"
        )

    @property
    def target(self) -> str:
        return " ".join(self.relations)


def _string(value: Any, what: str, path: Path, row: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise BadInputError(path, row, f"{what} must be a non-empty string, got {value!r}")
    return value.strip()


def _relations(annotation: Any, path: Path, row: int) -> tuple[str, str, list[str]]:
    if not isinstance(annotation, dict) or not all(k in annotation for k in ("x", "y", "r")):
        raise BadInputError(path, row, f"relation entry needs x, y and r, got {annotation!r}")
    labels = annotation["r"]
    if not isinstance(labels, list) or not labels:
        raise BadInputError(path, row, f"r must be a non-empty list of labels, got {labels!r}")
    labels = [_string(label, "relation label", path, row) for label in labels]
    if any(" " in label for label in labels):
        raise BadInputError(path, row, f"relation labels must not contain spaces: {labels!r}")
    return (
        _string(annotation["x"], "x", path, row),
        _string(annotation["y"], "y", path, row),
        labels,
    )


def read_pairs(path: Path, split: str) -> list[PairExample]:
    """The answerable entity pairs of one DialogRE file, in file order."""
    content = read_json(path)
    if not isinstance(content, list):
        raise BadInputError(path, None, "expected a list of [utterances, relations] dialogues")
    examples = []
    for index, item in enumerate(content):
        row = index + 1
        if not (isinstance(item, list) and len(item) == 2 and all(isinstance(p, list) for p in item)):
            raise BadInputError(path, row, "dialogue must be [utterances, relations]")
        utterances, annotations = item
        dialogue = "\n".join(_string(u, "utterance", path, row) for u in utterances)
        if not dialogue:
            raise BadInputError(path, row, "dialogue has no utterances")
        pairs: dict[tuple[str, str], tuple[int, list[str]]] = {}
        for position, annotation in enumerate(annotations):
            subject, obj, labels = _relations(annotation, path, row)
            _, merged = pairs.setdefault((subject, obj), (position, []))
            merged.extend(label for label in labels if label != NO_RELATION and label not in merged)
        for (subject, obj), (position, labels) in pairs.items():
            if labels:
                examples.append(
                    PairExample(
                        f"dialogre-{split}-{index}-{position}",
                        dialogue,
                        subject,
                        obj,
                        tuple(labels),
                        path,
                        row,
                    )
                )
    return examples


def load(spec: DatasetSpec, root: Path) -> SourceData:
    """Train + dev pairs as shots, test pairs as queries."""
    if spec.task != "icl":
        raise ConfigurationError(f"DialogRE builds the icl task, not {spec.task} ({spec.dataset})")
    folder = root / RELATIVE_DIR
    documents = [
        Document(
            pid=example.example_id,
            text=example.input,
            answer=example.target,
            label=example.relations[0],
            source_file=str(example.path),
            source_row=example.row,
        )
        for split in POOL_SPLITS
        for example in read_pairs(folder / f"{split}.json", split)
    ]
    queries = [
        Query(
            qid=example.example_id,
            turns=[example.input],
            gold=[example.target.split(" ")],
            source_file=str(example.path),
            source_row=example.row,
            gold_pids=[[]],
            metadata={"subject": example.subject, "object": example.object},
        )
        for example in read_pairs(folder / f"{QUERY_SPLIT}.json", QUERY_SPLIT)
    ]
    return SourceData(documents, queries)
