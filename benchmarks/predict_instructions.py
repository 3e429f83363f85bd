"""Instructions per predict, counted by valgrind's callgrind: a timing-noise-free speed figure.

Usage: python benchmarks/predict_instructions.py [--hardware a10] [--calls 20000] [OP ...]
       python benchmarks/predict_instructions.py --fresh-gemm [--calls 500]

Runs a child interpreter twice under callgrind, once predicting an example op ``--calls`` times
and once not at all, and reports the difference per call. The count is repeatable to a few
instructions for the same interpreter build (the children run with ``PYTHONHASHSEED=0``),
unlike wall time on a shared VM. Needs valgrind (Debian package ``valgrind``).

``--fresh-gemm`` counts instead one predict of a GEMM shape not seen before (the issue-4 GEMM,
m = 4096 + 8 i, n = 32768, k = 8192, bf16, as in ``predict_speed.py``'s fresh-shape figures):
``effective_roofline`` with the example's explicit kernel and with automatic selection, and
``extended_roofline`` with the explicit kernel. Both child runs build the same ops; only the
predicts differ.
"""

from __future__ import annotations

import argparse
import os
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


FRESH_CHILD = """
import sys
sys.path.insert(0, sys.argv[5])
from predict_speed import fresh_gemm_ops, load_op, ROOT
from opmodel.hardware import load_hardware
from opmodel.models import get_model
hw = load_hardware(sys.argv[1]); calls = int(sys.argv[2]); total = int(sys.argv[4])
model = get_model(sys.argv[6])
attrs = load_op(ROOT / "examples" / "gemm_extended_roofline.yaml").attrs
ops = fresh_gemm_ops(attrs if sys.argv[3] == "explicit" else {}, range(total + 1))
model.predict(ops[0], hw)
for op in ops[1 : calls + 1]:
    model.predict(op, hw)
"""


def _count(arguments: list[str]) -> int:
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *arguments]
    # a fixed string-hash seed: with Python's randomised one, dict probing moves the count by
    # a few thousand instructions from run to run
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    result = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    found = re.search(r"Collected : (\d+)", result.stderr)
    if found is None:
        raise SystemExit(f"valgrind printed no instruction count:\n{result.stderr[-500:]}")
    return int(found.group(1))


def _instructions(model: str, hardware: str, op: Path, calls: int) -> int:
    return _count([sys.executable, "-c", CHILD, model, hardware, str(op), str(calls)])


def _fresh_gemm(hardware: str, calls: int) -> None:
    benchmarks = str(ROOT / "benchmarks")
    cases = (
        ("effective_roofline", "explicit"),
        ("effective_roofline", "auto"),
        ("extended_roofline", "explicit"),
    )
    for model, mode in cases:
        counts = [
            _count(
                [
                    sys.executable,
                    "-c",
                    FRESH_CHILD,
                    hardware,
                    str(n),
                    mode,
                    str(calls),
                    benchmarks,
                    model,
                ]
            )
            for n in (0, calls)
        ]
        per_call = (counts[1] - counts[0]) / calls
        print(
            f"{model:<18} fresh GEMM shape, {mode:<8} kernel {per_call:>10.0f} instructions/predict"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ops", nargs="*", default=["gemm", "attention_prefill", "softmax"])
    parser.add_argument("--model", default="roofline")
    parser.add_argument("--hardware", default="a10")
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--fresh-gemm", action="store_true", help="count fresh-shape GEMM predicts")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind not found (apt-get install valgrind)")
    if args.fresh_gemm:
        _fresh_gemm(args.hardware, min(args.calls, 500))
        return
    for name in args.ops:
        op = ROOT / "examples" / f"{name}.yaml"
        base = _instructions(args.model, args.hardware, op, 0)
        total = _instructions(args.model, args.hardware, op, args.calls)
        print(
            f"{args.model:<12} {name:<24} {(total - base) / args.calls:>10.0f} instructions/predict"
        )


if __name__ == "__main__":
    main()
