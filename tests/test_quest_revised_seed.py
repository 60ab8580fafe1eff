"""seeds/quest_loft_revised_gold.csv is seed 002's Appendix E and F, row for row."""

from __future__ import annotations

import csv
import re

import pytest

from loft_warehouse.settings import PROJECT_ROOT

SEED_TEXT = PROJECT_ROOT.parent / "shared" / "seeds" / "002_a5849dd38939d3ca.txt"
CSV = PROJECT_ROOT / "seeds" / "quest_loft_revised_gold.csv"
ITEM = re.compile(r"^\s+(\d+)\. \1\.\s*$")
BULLET = re.compile(r"^\s+• (MATCH|DEBATABLE|NO_MATCH): (.*)$")


def _appendix_rows() -> list[tuple[str, str, str, str, str]]:
    lines = SEED_TEXT.read_text(encoding="utf-8").split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("Appendix E QUEST-LOFT-128K-Revised"))
    rows, section, number, question, expect_question = [], "", None, "", False
    for line in lines[start:]:
        if line.startswith("Appendix E") or line.startswith("Appendix F"):
            section, number = ("revised" if line.startswith("Appendix E") else "simple28"), None
            continue
        if match := ITEM.match(line):
            number, expect_question = match.group(1), True
        elif expect_question and line.strip():
            question, expect_question = line.strip(), False
        elif number and line.strip() == "• (No matching entities found)":
            rows.append((section, number, question, "NONE", ""))
        elif number and (bullet := BULLET.match(line)):
            rows.extend(
                (section, number, question, bullet.group(1), a) for a in re.findall(r"“([^”]*)”", bullet.group(2))
            )
    return rows


def test_seed_table_is_the_appendix():
    if not SEED_TEXT.is_file():
        pytest.skip("seed 002 not beside the project")
    with open(CSV, encoding="utf-8", newline="") as handle:
        table = [tuple(row.values()) for row in csv.DictReader(handle)]
    assert table == _appendix_rows()
    questions = {(s, n) for s, n, *_ in table}
    assert sum(s == "revised" for s, _ in questions) == 100
    # The seed text prints 23 of the 28 Simple28 questions.
    assert sum(s == "simple28" for s, _ in questions) == 23
