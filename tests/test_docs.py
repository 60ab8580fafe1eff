"""The README and docs/: a short README whose links all resolve, every command block run by a
test (or marked as needing a key), every `loft` command they name one the CLI takes, and the
tour's query and table (run on a built warehouse by tests/scoring/test_dbt_scoring.py)."""

from __future__ import annotations

import re

import yaml

from loft_warehouse.cli import build_parser
from loft_warehouse.design import Design
from loft_warehouse.settings import PROJECT_ROOT
from tests import docs_commands

README = PROJECT_ROOT / "README.md"
DOCS = sorted((PROJECT_ROOT / "docs").glob("*.md"))
LINK = re.compile(r"\]\(([^)\s]+)\)")


def tour() -> tuple[str, list[str], list[tuple[str, ...]]]:
    """The README tour's SQL, and the header and rows of the table printed under it."""
    sql = docs_commands.sql("tour")
    text = README.read_text(encoding="utf-8")
    after = text[text.index(sql) + len(sql) :].removeprefix("```\n").lstrip("\n")
    table = after.split("\n\n")[0].splitlines()
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


def test_ci_runs_the_readme_test_command_and_make_build_is_the_main_job() -> None:
    ci = (PROJECT_ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert ci[-1] == "make test"
    assert docs_commands.make_rule("build") == docs_commands.MakeRule(
        ["bytecode"], ["$(BIN)/loft build --select loft_128k"]
    )
    assert docs_commands.make_rule("bytecode").prerequisites == ["$(CORE)"]


def test_every_command_block_is_run_by_a_test_or_needs_a_key() -> None:
    """Every sh or sql block of the README and docs/ (the README's opening two commands are
    CI's, above) has a marker; each `run:` ID is one block's, and a test names it."""
    commands = [b for b in docs_commands.blocks() if b.language in ("sh", "sql")][1:]
    assert [f"{b.page.name}:{b.line}" for b in commands if not (b.run_id or b.needs_a_key)] == []
    ids = [b.run_id for b in commands if b.run_id]
    assert len(ids) == len(set(ids))
    tests = "\n".join(
        path.read_text(encoding="utf-8")
        for path in (PROJECT_ROOT / "tests").rglob("test_*.py")
        if path.name != "test_docs.py"
    )
    named = {i for i in ids if re.search(rf'(docs_commands\.\w+|build_as_documented)\(.*"{i}"', tests)}
    assert set(ids) - named == {"tour"}
    assert "tour()" in (PROJECT_ROOT / "tests" / "scoring" / "test_dbt_scoring.py").read_text(encoding="utf-8")


def test_every_loft_command_the_docs_name_is_one_the_cli_takes() -> None:
    """Inline `loft ...` synopses: the subcommand exists and each --option is one of its own."""
    subcommands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    wrong = []
    for page in [README, *DOCS]:
        for span in re.findall(r"`(?:\.venv/bin/)?loft ([^`]+)`", page.read_text(encoding="utf-8")):
            name, *words = span.split()
            names = [n for n in subcommands if n == name or (name.endswith("*") and n.startswith(name[:-1]))]
            options = {o for n in names for o in subcommands[n]._option_string_actions}
            passes_on = any(subcommands[n].get_default("passes_unknown_arguments") for n in names)
            unknown = [w for w in re.findall(r"--[a-z-]+", " ".join(words)) if w not in options and not passes_on]
            if not names or unknown:
                wrong.append(f"{page.name}: loft {span}")
    assert wrong == []


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


def _settings_table() -> list[str]:
    """The rows of docs/sizes-and-schemas.md's settings table, under its header."""
    text = (PROJECT_ROOT / "docs" / "sizes-and-schemas.md").read_text(encoding="utf-8")
    return text[text.index("| var | default | meaning |") :].split("\n\n")[0].splitlines()[2:]


def test_the_settings_table_lists_every_setting_of_dbt_project() -> None:
    """docs/sizes-and-schemas.md documents each key of dbt_project.yml's `loft` block (the one
    home of the settings), and no other."""
    keys = set(
        yaml.safe_load((PROJECT_ROOT / "dbt_project.yml").read_text(encoding="utf-8"))["models"]["loft"]["+loft"]
    )
    documented = {key for row in _settings_table() for key in re.findall(r"`(\w+)`", row.split("|")[1])}
    assert documented == keys


def _settings_rows() -> dict[str, str]:
    """The settings table's default cell of each var (a row naming several vars gives each its
    own part of the cell, in order)."""
    defaults = {}
    for row in _settings_table():
        names, default = (cell.strip() for cell in row.strip("|").split("|")[:2])
        keys = re.findall(r"`(\w+)`", names)
        parts = [part.strip().strip("`") for part in re.split(r",\s*(?![^\[]*\])", default)]
        defaults.update(zip(keys, parts if len(keys) > 1 else [default.strip("`")], strict=True))
    return defaults


def test_the_settings_table_gives_the_defaults_the_build_uses() -> None:
    defaults = _settings_rows()
    design = Design()
    numbers = {
        name: getattr(design, name)
        for name in ("litm_documents", "rr_lengths", "rr_step", "reprompt_every", "icr_pages", "chunk_tokens",
                     "verify_candidates")
    }  # fmt: skip
    assert {name: defaults[name] for name in numbers} == {
        name: str(list(value)) if isinstance(value, tuple) else str(value) for name, value in numbers.items()
    }
    assert (defaults["methods"], defaults["prompt_variants"]) == (
        f"[{design.methods[0].name}]",
        f"[{design.variants[0].name}]",
    )
    project = (PROJECT_ROOT / "dbt_project.yml").read_text(encoding="utf-8")
    assert f"var('seed', {defaults['seed']})" in project
