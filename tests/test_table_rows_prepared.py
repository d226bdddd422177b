"""``TableRowsPrepared`` (issue 35): a run's units as rows of one request table, their states as
columns; each ``Prepared`` made when asked equals what ``prepare`` makes for its unit."""

from __future__ import annotations

import numpy as np
import pytest

from stereoset_eval.scoring.engine_rows import TableRows
from stereoset_eval.scoring.methods.base import Prepared, TableRowsPrepared
from stereoset_eval.scoring.requests import Request
from stereoset_eval.scoring.table import RequestTable


def two_unit_table() -> RequestTable:
    """Unit 0: one request on input 0 with two gathers; unit 1: one request on input 1 with one."""
    inputs = [((1, 5, 6, 2), None), ((1, 7, 2), None)]
    return RequestTable(inputs, np.array([0, 0, 1]), np.array([1, 2, 1]), np.array([5, 6, 7]),
                        np.array([0, 2, 3]), np.array([0, 1, 2]))


def test_each_row_is_the_prepared_of_its_unit_with_its_state_from_the_columns():
    table = two_unit_table()
    rows = TableRowsPrepared(table, {"ids": [(5, 6), (7,)], "word": ["ab", "c"]})
    assert len(rows) == 2
    first = rows[0]
    assert first.table is table and first.index == 0
    assert first.state == {"ids": [5, 6], "word": "ab"}  # a tuple column's value as prepare's list
    assert first.requests == [Request((1, 5, 6, 2), ((1, 5), (2, 6)))]
    assert rows[-1].state == {"ids": [7], "word": "c"} and rows[-1].index == 1
    assert rows[0:2] == [rows[0], rows[1]] and rows[1:] == [rows[1]]
    with pytest.raises(IndexError):
        rows[2]


def test_rows_equal_the_list_of_the_same_prepared_and_not_another():
    table = two_unit_table()
    rows = TableRowsPrepared(table, {"ids": [(5, 6), (7,)]})
    same = [Prepared(table.requests(0), {"ids": [5, 6]}), Prepared(table.requests(1), {"ids": [7]})]
    assert rows == same and same == rows
    assert rows != [same[0], Prepared(table.requests(1), {"ids": [8]})]
    assert rows == TableRowsPrepared(table, {"ids": [(5, 6), (7,)]})
    assert rows != TableRowsPrepared(table, {"ids": [(5, 6), (8,)]})


def test_the_engine_reads_the_columns_as_they_are_and_a_list_of_rows_as_columns():
    table = two_unit_table()
    columns = {"ids": [(5, 6), (7,)]}
    rows = TableRowsPrepared(table, columns)
    assert TableRows.applies(rows) and TableRows(rows).columns == columns
    listed = list(rows)  # the same rows as Prepared objects: columns made from their states
    assert TableRows.applies(listed) and TableRows(listed).columns == {"ids": [[5, 6], [7]]}
    assert not TableRows.applies(listed[:1])  # not every unit of the table
