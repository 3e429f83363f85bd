"""Write ``src/opmodel/configs/accuracy/measured_error.json``: the held-out error of
the kernel-level models by op kind and hardware that ``opmodel predict --format text`` quotes
(:mod:`opmodel.validation.accuracy_table`). Run after any change that moves a validation
figure; tests/validation/test_accuracy_table.py fails until the file matches.

Usage: python scripts/write_accuracy_table.py [--data-dir data]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from opmodel import OpModelError
from opmodel.configs import ACCURACY_DIR
from opmodel.validation.accuracy_table import accuracy_table

ROOT = Path(__file__).resolve().parent.parent
TABLE = ACCURACY_DIR / "measured_error.json"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT / "data")
    args = parser.parse_args(argv)
    try:
        text = accuracy_table(args.data_dir)
    except OpModelError as exc:  # a missing or unreadable data folder: one line, exit 1
        raise SystemExit(f"write_accuracy_table.py: {exc}") from None
    TABLE.write_text(text, encoding="utf-8")
    print(f"wrote {TABLE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
