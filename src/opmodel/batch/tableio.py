"""Read and write sweep tables as CSV (standard library) or Parquet (pyarrow, extra ``sweep``).

A table is held column-wise: ``{column: [values...]}`` with every column the same length. CSV
cells are strings on read; on write ``None`` becomes an empty cell and floats keep full
precision (``repr``). The format follows the file name: ``.csv`` or ``.parquet``/``.pq``.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from opmodel.core.errors import ConfigError
from opmodel.parsing.textfile import text_file

__all__ = ["TABLE_SUFFIXES", "Table", "read_table", "table_format", "write_table"]

Table = dict[str, list[Any]]

TABLE_SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


def table_format(path: Path) -> str:
    """``csv`` or ``parquet`` by the file suffix; ConfigError naming the accepted ones."""
    fmt = TABLE_SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        accepted = ", ".join(TABLE_SUFFIXES)
        raise ConfigError([f"{path}: unknown table format '{path.suffix}' (accepted: {accepted})"])
    return fmt


def _pyarrow(path: Path) -> Any:
    try:
        import pyarrow.parquet as pq  # noqa: PLC0415 - optional dependency
    except ImportError:
        msg = f"{path}: Parquet needs pyarrow: pip install 'opmodel[sweep]'"
        raise ConfigError([msg]) from None
    return pq


def read_table(path: Path) -> Table:
    """The columns of the table at ``path``; ConfigError for a missing or unreadable file."""
    fmt = table_format(path)
    if not path.is_file():
        raise ConfigError([f"{path}: file not found"])
    if fmt == "parquet":
        try:
            return dict(_pyarrow(path).read_table(path).to_pydict())
        except (OSError, ValueError) as exc:
            raise ConfigError([f"{path}: not a readable Parquet file ({exc})"]) from None
    with text_file(path) as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if not header:
            raise ConfigError([f"{path}: empty file (expected a header row)"])
        columns: list[list[Any]] = [[] for _ in header]
        for number, record in enumerate(reader, start=2):
            if len(record) != len(header):
                msg = f"{path}: line {number}: {len(record)} cells for {len(header)} columns"
                raise ConfigError([msg])
            for column, value in zip(columns, record, strict=True):
                column.append(value)
    return dict(zip(header, columns, strict=True))


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return value


def write_table(path: Path, table: Table) -> None:
    """Write ``table`` to ``path`` in the format its suffix names."""
    fmt = table_format(path)
    if fmt == "parquet":
        pq = _pyarrow(path)
        import pyarrow as pa  # noqa: PLC0415 - optional dependency

        pq.write_table(pa.table(table), path)
        return
    names = list(table)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(names)
        columns = [table[name] for name in names]
        writer.writerows([_csv_cell(v) for v in row] for row in zip(*columns, strict=True))
