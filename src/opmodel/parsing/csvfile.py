"""Read a CSV file whose columns are known in advance: one-line errors naming the file."""

from __future__ import annotations

import csv
from pathlib import Path

from opmodel.core.errors import ConfigError
from opmodel.parsing.textfile import text_file

__all__ = ["read_csv_rows"]


def read_csv_rows(path: Path, required: tuple[str, ...]) -> list[dict[str, str]]:
    """The rows of the CSV at ``path`` as mappings by column name; ConfigError naming the file
    when it cannot be read or lacks one of the ``required`` columns."""
    with text_file(path) as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in required if c not in (reader.fieldnames or ())]
        if missing:
            raise ConfigError([f"{path}: missing columns {', '.join(missing)}"])
        return list(reader)
