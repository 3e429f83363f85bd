"""The arguments every fit on measured op rows takes: where the op tables are, the split's
hardware and source, and the calibration file to write (fit_start_drain.py,
fit_streaming_instructions.py, fit_aten_softmax.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def op_fit_parser(
    doc: str | None, output: Path, hardware: str, source: str
) -> argparse.ArgumentParser:
    """A parser with ``--data-dir`` (default ``data``), ``--hardware`` and ``--source`` (the
    training split's, defaulting to ``hardware`` and ``source``) and ``--output`` (default
    ``output``, the shipped calibration); the script adds its own arguments."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT / "data")
    parser.add_argument("--hardware", default=hardware)
    parser.add_argument("--source", default=source)
    parser.add_argument("--output", type=Path, default=output)
    return parser
