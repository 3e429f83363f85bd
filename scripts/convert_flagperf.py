"""Write FlagPerf's published ATen reduction timings on an A100-40GiB-SXM into
data/ops/flagperf/flagperf_a100.csv (an op table, docs/sweeps.md).

Usage: python scripts/convert_flagperf.py [--out data/ops/flagperf]

FlagPerf (BAAI, github.com/FlagOpen/FlagPerf, Apache-2.0) publishes, per operator and dtype,
``operation/benchmarks/<op>/nvidia/A100_40_SXM/<DTYPE>_README.md``: one DGX A100 board
(A100-40GiB-SXM, 400 W, clocks not locked), the ``nativetorch`` row's ``kerneltime`` (Triton
``do_bench``, median of CUDA-event times over 1,000 calls, each after a 256 MB flush of the
L2) and ``cputime`` (wall clock over 50,000 back-to-back calls). The tensors come from each
op's ``main.py``: ``torch.sum``, ``mean``, ``max`` and ``min`` of ``randn(1024, 1024, 1024)``
(``Melements: 1024``; the READMEs' TFLOPS column, ``elements / kerneltime``, gives the same
2^30 elements) and ``torch.amax(a, 1)`` of ``randn(81920, 81920)`` (``M x 80, N x 80``; the
TFLOPS column gives 6.7e9 elements, the memory column 64 % of 40 GiB in fp32). Each is one
ATen ``reduce_kernel`` launch. The numbers are copied from the READMEs at the commits named
beside them, never edited.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import NamedTuple

from csv_table import OP_TABLE_COLUMNS, write_table

REPO = "FlagOpen/FlagPerf"
HARDWARE = "a100_40gb_sxm"
FLUSH_BYTES = 268435456  # triton.testing.do_bench zeroes a 256 MB buffer before each call
DTYPES = {"FP32": "fp32", "FP16": "fp16", "BF16": "bf16"}


class Published(NamedTuple):
    """One README's nativetorch row: ``kerneltime`` and ``cputime`` in microseconds."""

    op: str
    dtype: str
    kernel_us: float
    cpu_us: float
    commit: str


# (op folder, function, input shape, output shape)
SHAPES = {
    "sum": ("sum", (1024, 1024, 1024), (1,)),
    "mean": ("mean", (1024, 1024, 1024), (1,)),
    "max": ("max", (1024, 1024, 1024), (1,)),
    "min": ("min", (1024, 1024, 1024), (1,)),
    "amax": ("max", (81920, 81920), (81920,)),
}
PUBLISHED = (
    Published("sum", "FP32", 2973.7, 2952.23, "10c7afd3c6cbaea2b530d57baccc9155e23f2414"),
    Published("sum", "FP16", 1567.74, 1546.68, "19dc383943108a681f75788de43368ffafc1438c"),
    Published("sum", "BF16", 1568.77, 1548.04, "10c7afd3c6cbaea2b530d57baccc9155e23f2414"),
    Published("mean", "FP32", 2973.7, 2951.85, "572fd7d8d2401132019bd1b145df521ab324ef94"),
    Published("mean", "FP16", 1576.96, 1555.63, "19dc383943108a681f75788de43368ffafc1438c"),
    Published("mean", "BF16", 1576.96, 1556.52, "0c1e8ea424e7e0cb0c154f6b31a92691b7fa0f7b"),
    Published("max", "FP32", 2982.91, 2961.98, "02a89b9bcd6b76bf761db5fc29625e8a490ac3d7"),
    Published("max", "FP16", 1612.8, 1590.38, "66eb17e4f4f1282c03f2f2ec17f61dba41cb3cee"),
    Published("max", "BF16", 1629.18, 1608.7, "66eb17e4f4f1282c03f2f2ec17f61dba41cb3cee"),
    Published("min", "FP32", 2983.94, 2962.03, "10c7afd3c6cbaea2b530d57baccc9155e23f2414"),
    Published("min", "FP16", 1611.78, 1590.4, "0c1e8ea424e7e0cb0c154f6b31a92691b7fa0f7b"),
    Published("min", "BF16", 1629.18, 1608.85, "0c1e8ea424e7e0cb0c154f6b31a92691b7fa0f7b"),
    Published("amax", "FP32", 19630.08, 19601.09, "10c7afd3c6cbaea2b530d57baccc9155e23f2414"),
    Published("amax", "FP16", 10046.46, 10025.23, "66eb17e4f4f1282c03f2f2ec17f61dba41cb3cee"),
    Published("amax", "BF16", 10165.25, 10144.45, "10c7afd3c6cbaea2b530d57baccc9155e23f2414"),
)


def _shape(dims: tuple[int, ...]) -> str:
    return "x".join(str(d) for d in dims)


def op_row(p: Published) -> dict[str, object]:
    """The op-table row of one published timing (``time`` in ms, the kernel time)."""
    function, x, y = SHAPES[p.op]
    dtype = DTYPES[p.dtype]
    attrs = {"function": function, "l2_dirty_bytes": FLUSH_BYTES}
    return {
        "name": p.op,
        "kind": "reduction",
        "phase": "inference",
        "tensors": f"input:{_shape(x)}:{dtype};output:{_shape(y)}:{dtype}",
        "attrs": json.dumps(attrs),
        "time": p.kernel_us / 1000.0,
        "hardware": HARDWARE,
        "clock_mhz": "",
        "source": "flagperf",
        "implementation": "pytorch",
        "label": f"{p.op}:flagperf:{dtype}:{_shape(x)}",
        "timing_scope": "event",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("data/ops/flagperf"))
    args = parser.parse_args(argv)
    write_table(args.out / "flagperf_a100.csv", OP_TABLE_COLUMNS, [op_row(p) for p in PUBLISHED])
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("convert_flagperf", main)
