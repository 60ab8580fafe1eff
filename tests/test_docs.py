"""The README and docs/: a short README whose links all resolve, and the tour's query and table
(run on a built warehouse by tests/scoring/test_dbt_scoring.py)."""

from __future__ import annotations

import re

import yaml

from loft_warehouse.settings import PROJECT_ROOT

README = PROJECT_ROOT / "README.md"
DOCS = sorted((PROJECT_ROOT / "docs").glob("*.md"))
LINK = re.compile(r"\]\(([^)\s]+)\)")


def tour() -> tuple[str, list[str], list[tuple[str, ...]]]:
    """The README tour's SQL, and the header and rows of the table printed under it."""
    text = README.read_text(encoding="utf-8")
    after = text[text.index("<!-- tour:") :]
    sql = after[after.index("```sql\n") + 7 : after.index("\n```", after.index("```sql\n"))]
    table = [line for line in after[after.index("\n```", after.index("```sql\n")) + 4 :].split("\n\n")[1].splitlines()]
    cells = [tuple(cell.strip() for cell in line.strip("|").split("|")) for line in table]
    return sql, list(cells[0]), cells[2:]


def as_cells(row: tuple[object, ...]) -> tuple[str, ...]:
    """A result row as the README's table writes it (NULL as an empty cell)."""
    return tuple("" if value is None else str(value) for value in row)


def _anchor(heading: str) -> str:
    return re.sub(r"[^a-z0-9 -]", "", heading.lower()).replace(" ", "-")


def test_the_readme_is_short_and_starts_with_the_two_commands() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150
    assert lines[2] == "```sh" and lines[3].startswith("make build ") and lines[4].startswith("make test ")


def test_every_link_of_the_readme_and_docs_resolves() -> None:
    broken = []
    for page in [README, *DOCS]:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if target.startswith(("http://", "https://")):
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and file.suffix == ".md":
                headings = re.findall(r"^#+ (.+)$", file.read_text(encoding="utf-8"), flags=re.M)
                if anchor not in {_anchor(h) for h in headings}:
                    broken.append(f"{page.name}: {target}")
    assert broken == []


def test_every_docs_page_is_in_the_readme_contents() -> None:
    text = README.read_text(encoding="utf-8")
    assert [page.name for page in DOCS if f"(docs/{page.name})" not in text] == []


def test_the_tour_table_is_one_row_per_line_under_its_header() -> None:
    sql, header, rows = tour()
    assert sql.lstrip().startswith("select") and header == ["dataset", "metric", "system", "value", "n"]
    assert rows and all(len(row) == len(header) for row in rows)


def test_the_settings_table_lists_every_setting_of_dbt_project() -> None:
    """docs/sizes-and-schemas.md documents each key of dbt_project.yml's `loft` block (the one
    home of the settings), and no other."""
    keys = set(
        yaml.safe_load((PROJECT_ROOT / "dbt_project.yml").read_text(encoding="utf-8"))["models"]["loft"]["+loft"]
    )
    text = (PROJECT_ROOT / "docs" / "sizes-and-schemas.md").read_text(encoding="utf-8")
    table = text[text.index("| var | default | meaning |") :].split("\n\n")[0]
    documented = {key for row in table.splitlines()[2:] for key in re.findall(r"`(\w+)`", row.split("|")[1])}
    assert documented == keys
