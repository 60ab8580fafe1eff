"""Hostile inputs shared by the tests and benchmarks/hostile_memory.py (issue 60 item 2)."""

# Nine levels of nine YAML aliases in 295 bytes: 9**9 items wherever the value is walked.
ALIAS_BOMB = (
    "{seed: {a: &a [x,x,x,x,x,x,x,x,x], "
    + ", ".join(
        f"{name}: &{name} [{', '.join(['*' + previous] * 9)}]"
        for previous, name in zip("abcdefgh", "bcdefghi", strict=True)
    )
    + "}}"
)
