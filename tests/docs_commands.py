"""The commands of the README and docs/, for the tests that run them.

Every fenced `sh` or `sql` block carries a marker on the line above it: `<!-- run: ID ... -->`
when a test runs it (that test names ID through one of the functions here), or
`<!-- needs a key ... -->` when it would spend money. The README's opening block is the two
commands CI runs (`.ci/run`); tests/test_docs.py holds the rules."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from loft_warehouse.settings import PROJECT_ROOT

PAGES = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
MARKER = re.compile(r"<!-- (?:run: (?P<id>[a-z0-9-]+)|(?P<key>needs a key))\b[^>]*-->")
ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=")
MAKE_RULE = re.compile(r"^(?P<target>[\w.$()-]+):(?P<prerequisites>[^=\n]*)\n(?P<recipe>(?:\t.*\n?)*)", re.M)


@dataclass(frozen=True)
class Block:
    """One fenced block of a page, with the marker on the line above it (if any)."""

    page: Path
    line: int
    language: str
    text: str
    run_id: str | None
    needs_a_key: bool


@dataclass(frozen=True)
class Invocation:
    """One command line of a block: the variables it sets, the program and its arguments."""

    env: dict[str, str]
    program: str
    args: list[str]


@dataclass(frozen=True)
class MakeRule:
    """One rule of the Makefile: what it depends on and the commands of its recipe."""

    prerequisites: list[str]
    recipe: list[str]


def make_rule(target: str) -> MakeRule:
    """The Makefile's rule for `target` (the README's commands are `make` targets)."""
    makefile = (PROJECT_ROOT / "Makefile").read_text(encoding="utf-8")
    for rule in MAKE_RULE.finditer(makefile):
        if rule["target"] == target:
            recipe = [line.removeprefix("\t") for line in rule["recipe"].splitlines()]
            return MakeRule(rule["prerequisites"].split(), recipe)
    raise AssertionError(f"the Makefile has no rule for {target!r}")


def blocks() -> list[Block]:
    """Every fenced block of the README and docs/, in page order."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for fence in FENCE.finditer(text):
            line = text.count("\n", 0, fence.start()) + 1
            above = text[: fence.start()].rstrip("\n").rsplit("\n", 1)[-1]
            marker = MARKER.fullmatch(above.strip())
            found.append(
                Block(
                    page=page,
                    line=line,
                    language=fence.group(1),
                    text=fence.group(2),
                    run_id=marker.group("id") if marker else None,
                    needs_a_key=bool(marker and marker.group("key")),
                )
            )
    return found


def text(run_id: str) -> str:
    """The block marked `run: run_id`, as written."""
    [block] = [block for block in blocks() if block.run_id == run_id]
    return block.text


def sql(run_id: str) -> str:
    """The SQL of the block marked `run: run_id`."""
    return text(run_id)


def invocations(run_id: str) -> list[Invocation]:
    """The command lines of the shell block marked `run: run_id` (continuations joined, leading
    NAME=value words as its environment, a trailing `&` kept as the last argument)."""
    commands = []
    for line in text(run_id).replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        env = {}
        while ASSIGNMENT.match(words[0]):
            name, _, value = words.pop(0).partition("=")
            env[name] = value
        commands.append(Invocation(env=env, program=words[0], args=words[1:]))
    return commands


def dbt_runs(run_id: str) -> list[Invocation]:
    """The build command lines (`loft build` or `dbt build`) of the shell block marked `run: run_id`,
    each with dbt's arguments (`loft build` takes dbt build's)."""
    runs = [command for command in invocations(run_id) if _is_build(command)]
    assert runs, f"no dbt command in the block marked run: {run_id}"
    return runs


def _is_build(command: Invocation) -> bool:
    program = Path(command.program).name
    return program == "dbt" or (program == "loft" and command.args[:1] == ["build"])
