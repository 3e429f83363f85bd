"""Instructions per predict, counted by valgrind's callgrind: a timing-noise-free speed figure.

Usage: python benchmarks/predict_instructions.py [--hardware a10] [--calls 20000] [OP ...]

Runs a child interpreter twice under callgrind, once predicting an example op ``--calls`` times
and once not at all, and reports the difference per call. The count is repeatable to a few
instructions for the same interpreter build, unlike wall time on a shared VM. Needs valgrind
(Debian package ``valgrind``).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHILD = """
import sys
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.parsing import load_op
model = get_model(sys.argv[1]); hw = load_hardware(sys.argv[2]); op = load_op(sys.argv[3])
model.predict(op, hw)
predict = model.predict
for _ in range(int(sys.argv[4])):
    predict(op, hw)
"""


def _instructions(model: str, hardware: str, op: Path, calls: int) -> int:
    command = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        "-c",
        CHILD,
        model,
        hardware,
        str(op),
        str(calls),
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", result.stderr)
    if found is None:
        raise SystemExit(f"valgrind printed no instruction count:\n{result.stderr[-500:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ops", nargs="*", default=["gemm", "attention_prefill", "softmax"])
    parser.add_argument("--model", default="roofline")
    parser.add_argument("--hardware", default="a10")
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind not found (apt-get install valgrind)")
    for name in args.ops:
        op = ROOT / "examples" / f"{name}.yaml"
        base = _instructions(args.model, args.hardware, op, 0)
        total = _instructions(args.model, args.hardware, op, args.calls)
        print(
            f"{args.model:<12} {name:<24} {(total - base) / args.calls:>10.0f} instructions/predict"
        )


if __name__ == "__main__":
    main()
