import pytest

from loft_warehouse.sql.exec_accuracy import (
    cell_set_loft,
    exec_acc_conversation,
    exec_acc_loft,
    exec_acc_strict,
    exec_acc_turn_average,
    normalize_cell_loft,
)


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        (45, "45.00"),
        (45.0, "45.00"),
        ("45", "45.00"),
        (" 45 ", "45.00"),
        (2.675, "2.67"),  # binary 2.67499999...
        (-0.001, "-0.00"),
        (1 / 3, "0.33"),
        (True, "1.00"),
        ("1e3", "1000.00"),
        (None, "none"),
        ("  Paris ", "paris"),
        ("", ""),
        (["a"], "['a']"),
        ("nan", "nan"),
        (float("nan"), "nan"),
        (float("-inf"), "-inf"),
        (-0.0, "-0.00"),
        (10**400, "1" + "0" * 400),  # float() overflows: str()
        (False, "0.00"),
    ],
)
def test_loft_cell_normalisation(cell, expected):
    assert normalize_cell_loft(cell) == expected


def test_loft_rows_drop_empty_cells():
    assert cell_set_loft(["", "A", None, "a"]) == {"a", "none"}
    assert cell_set_loft(["  "]) == frozenset()
    with pytest.raises(TypeError):
        cell_set_loft(5)


def test_loft_numbers_match_across_types():
    gold = [[45]]
    assert exec_acc_loft(gold, [["45"]]) == 1.0
    assert exec_acc_loft(gold, [[45.0]]) == 1.0
    assert exec_acc_loft(gold, [[45.004]]) == 1.0  # rounds to 45.00
    assert exec_acc_loft(gold, [[45.01]]) == 0.0
    assert exec_acc_loft([[3.3333333333333335]], [["3.33"]]) == 1.0


def test_loft_none_is_the_text_none():
    assert exec_acc_loft([[None]], [["None"]]) == 1.0
    assert exec_acc_loft([[None]], [[None]]) == 1.0
    assert exec_acc_loft([[None]], [[""]]) == 0.0  # empty row vs {'none'}


def test_loft_empty_cells_are_dropped_on_both_sides():
    assert exec_acc_loft([["a", ""]], [["a"]]) == 1.0
    assert exec_acc_loft([["a", None]], [["a"]]) == 0.0


def test_loft_duplicate_rows_are_membership_not_multiset():
    assert exec_acc_loft([["a"], ["b"]], [["a"], ["a"]]) == 1.0
    assert exec_acc_loft([["a"], ["a"]], [["a"], ["b"]]) == 0.0  # ['b'] is not a gold row
    assert exec_acc_loft([["a"], ["b"]], [["a"]]) == 0.0  # row counts differ


def test_loft_duplicate_cells_collapse_within_a_row():
    assert exec_acc_loft([["x", "x", "y"]], [["y", "x"]]) == 1.0


def test_loft_flat_list_is_one_row():
    assert exec_acc_loft([["Paris", 3]], ["3", "paris"]) == 1.0
    assert exec_acc_loft([["Paris"], ["Rome"]], ["Paris", "Rome"]) == 0.0


def test_loft_ignores_row_and_column_order_and_case():
    gold = [["USA", 5], ["France", 2]]
    assert exec_acc_loft(gold, [[2, "france"], ["5", "usa"]]) == 1.0


def test_loft_shape_quirks():
    assert exec_acc_loft([["a"]], []) == 0.0
    assert exec_acc_loft([["a"]], "a") == 0.0  # not a list: no rows
    assert exec_acc_loft([["a", "b"]], [["a"], "ab"]) == 0.0  # 'ab' is the row {'a', 'b'}: 2 rows vs 1
    assert exec_acc_loft([["a"], ["b", "c"]], [["a"], "cb"]) == 1.0  # a string row is its characters
    assert exec_acc_loft([["a"], ["b"]], [["a"], 7]) == 0.0  # upstream raises on a non-iterable row
    with pytest.raises(ValueError, match="non-empty list of lists"):
        exec_acc_loft([], [])


def test_strict_numbers_equal_by_value_without_rounding():
    assert exec_acc_strict([[45]], [["45"]]) == 1.0
    assert exec_acc_strict([[45]], [[45.0]]) == 1.0
    assert exec_acc_strict([[45]], [[45.004]]) == 0.0
    assert exec_acc_strict([[3.3333333333333335]], [["3.33"]]) == 0.0


def test_strict_is_case_sensitive_and_keeps_none_distinct():
    assert exec_acc_strict([["Paris"]], [["paris"]]) == 0.0
    assert exec_acc_strict([["Paris"]], [[" Paris "]]) == 1.0
    assert exec_acc_strict([[None]], [[None]]) == 1.0
    assert exec_acc_strict([[None]], [["None"]]) == 0.0
    assert exec_acc_strict([["a", ""]], [["a"]]) == 0.0


def test_strict_counts_duplicate_rows():
    assert exec_acc_strict([["a"], ["b"]], [["a"], ["a"]]) == 0.0
    assert exec_acc_strict([["a"], ["a"]], [["a"], ["a"]]) == 1.0


def test_strict_row_order_matters_only_when_ordered():
    gold = [["a", 1], ["b", 2]]
    swapped = [["b", 2], ["a", 1]]
    assert exec_acc_strict(gold, swapped) == 1.0
    assert exec_acc_strict(gold, swapped, ordered=True) == 0.0
    assert exec_acc_strict(gold, [["a", 1], ["b", 2]], ordered=True) == 1.0


def test_strict_permutes_whole_columns():
    gold = [["a", 1], ["b", 2]]
    assert exec_acc_strict(gold, [[1, "a"], [2, "b"]]) == 1.0
    assert exec_acc_strict(gold, [[1, "b"], [2, "a"]]) == 0.0  # cells, not columns, swapped
    assert exec_acc_strict(gold, [[1, "a"], [2, "b"]], ordered=True) == 1.0
    assert exec_acc_strict(gold, [[2, "b"], [1, "a"]], ordered=True) == 0.0
    same_values = [[1, 1], [1, 2]]
    assert exec_acc_strict(same_values, [[1, 1], [2, 1]]) == 1.0


def test_strict_takes_an_integer_beyond_float_range_as_itself():
    huge = 10**400
    assert exec_acc_strict([[huge]], [[huge]]) == 1.0
    assert exec_acc_strict([[huge]], [[huge + 1]]) == 0.0
    assert exec_acc_strict([[huge]], [[str(huge)]]) == 0.0  # its text is float('inf'): text
    assert exec_acc_loft([[huge]], [[str(huge)]]) == 0.0  # upstream too: "inf" against its digits


def test_strict_shapes():
    assert exec_acc_strict([["a", "b"]], ["a", "b"]) == 1.0  # flat list = one row
    assert exec_acc_strict([["a"], ["b"]], ["a", "b"]) == 0.0
    assert exec_acc_strict([["a"]], [["a", "b"]]) == 0.0
    assert exec_acc_strict([["a"]], []) == 0.0
    assert exec_acc_strict([["a"]], "a") == 0.0
    with pytest.raises(ValueError):
        exec_acc_strict([], [["a"]])


def test_sparc_conversation_needs_every_turn():
    assert exec_acc_conversation([1.0, 1.0, 1.0]) == 1.0
    assert exec_acc_conversation([1.0, 0.0, 1.0]) == 0.0
    assert exec_acc_conversation([]) == 0.0
    assert exec_acc_turn_average([1.0, 0.0, 1.0, 1.0]) == 0.75
