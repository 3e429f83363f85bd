"""Write an ``opmodel measure`` dataset again from its run.json (opmodel.measure.rebuild).

Usage: python scripts/rebuild_measured_dataset.py --run-json DIR/run.json --output-dir DIR
       [--grid NAME_OR_PATH]

The measured numbers are carried over unchanged; only how each case is described as an op
(attrs, the ``implementation`` column) follows the current code. The original date is kept.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from opmodel.measure.rebuild import rebuild_dataset


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run-json", required=True, type=Path)
    parser.add_argument("--output-dir", required=True, type=Path)
    parser.add_argument("--grid", help="grid the run used (default: the name in run.json)")
    args = parser.parse_args(argv)
    print(json.dumps(rebuild_dataset(args.run_json, args.output_dir, args.grid)))
    return 0


if __name__ == "__main__":
    import script_errors

    script_errors.run("rebuild_measured_dataset", main)
