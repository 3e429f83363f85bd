"""How the converters of this folder write a table: one CSV with a header, ``\\n`` line ends,
its folder made first, and a line saying how many rows it holds."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path


def write_table(path: Path, columns: Sequence[str], rows: Sequence[dict[str, object]]) -> None:
    """Write ``rows`` (dicts keyed by ``columns``) to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"{path}: {len(rows)} rows")
