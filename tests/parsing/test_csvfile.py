"""read_csv_rows: rows by column name, one-line errors naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel.core.errors import ConfigError
from opmodel.parsing.csvfile import read_csv_rows


def test_rows_by_column_name(tmp_path: Path) -> None:
    path = tmp_path / "k.csv"
    path.write_text("index,label,extra\n0,gemm,x\n1,softmax,y\n", encoding="utf-8")
    rows = read_csv_rows(path, ("index", "label"))
    assert [(r["index"], r["label"]) for r in rows] == [("0", "gemm"), ("1", "softmax")]


def test_missing_columns_and_missing_file_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "k.csv"
    path.write_text("index\n0\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"k\.csv: missing columns label, kernel$"):
        read_csv_rows(path, ("index", "label", "kernel"))
    with pytest.raises(ConfigError, match=r"absent\.csv: file not found$"):
        read_csv_rows(tmp_path / "absent.csv", ("index",))
    empty = tmp_path / "empty.csv"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"empty\.csv: missing columns index$"):
        read_csv_rows(empty, ("index",))
