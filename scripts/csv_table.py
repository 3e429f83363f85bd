"""How the converters of this folder write a table: one CSV with a header, ``\\n`` line ends,
its folder made first, and a line saying how many rows it holds."""

from __future__ import annotations

import argparse
import csv
from collections.abc import Callable, Sequence
from pathlib import Path

from script_errors import require_sources

OP_TABLE_COLUMNS = (
    "name",
    "kind",
    "phase",
    "tensors",
    "attrs",
    "time",
    "hardware",
    "clock_mhz",
    "source",
    "implementation",
    "label",
    "timing_scope",
)
"""The columns of an op table (docs/sweeps.md), as ``validate-ops`` reads them."""

PROFILER_US_TRUNCATION_S = "1e-06"
"""``time_truncation_s`` of a time PyTorch's profiler took before its traces held nanoseconds:
each kernel's duration cut down to whole microseconds (kineto's ``(end - start) / 1000``;
opmodel.validation.measured_values). Vidur's tables show it: every time is a whole or half
microsecond, the median of 20 whole ones."""

TRUNCATED_OP_TABLE_COLUMNS = (*OP_TABLE_COLUMNS, "time_truncation_s")
"""An op table whose times were truncated, with the step in its last column."""


def write_table(path: Path, columns: Sequence[str], rows: Sequence[dict[str, object]]) -> None:
    """Write ``rows`` (dicts keyed by ``columns``) to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"{path}: {len(rows)} rows")


def converter_main(
    name: str,
    description: str,
    argv: Sequence[str] | None,
    sources: Sequence[str],
    convert: Callable[[Path, Path], object],
) -> int:
    """A converter's command line: ``--shared-dir`` (which must hold ``sources``) and
    ``--out`` (default data/blocks); then ``convert(shared_dir, out)``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--shared-dir", type=Path, default=Path("../shared/data"))
    parser.add_argument("--out", type=Path, default=Path("data/blocks"))
    args = parser.parse_args(argv)
    require_sources(name, args.shared_dir, sources)
    convert(args.shared_dir, args.out)
    return 0
