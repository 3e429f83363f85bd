"""Write FlagPerf's published ATen reduction and elementwise timings on an A100-40GiB-SXM
into data/ops/flagperf/flagperf_a100.csv (an op table, docs/sweeps.md).

Usage: python scripts/convert_flagperf.py [--out data/ops/flagperf]

FlagPerf (BAAI, github.com/FlagOpen/FlagPerf, Apache-2.0) publishes, per operator and dtype,
``operation/benchmarks/<op>/nvidia/A100_40_SXM/<DTYPE>_README.md``: one DGX A100 board
(A100-40GiB-SXM, 400 W, clocks not locked), the ``nativetorch`` row's ``kerneltime`` (Triton
``do_bench``, median of CUDA-event times over 1,000 calls, each after a 256 MB flush of the
L2) and ``cputime`` (wall clock over 50,000 back-to-back calls). The tensors come from each
op's ``main.py``: ``torch.sum``, ``mean``, ``max`` and ``min`` of ``randn(1024, 1024, 1024)``
(``Melements: 1024``; the READMEs' TFLOPS column, ``elements / kerneltime``, gives the same
2^30 elements) and ``torch.amax(a, 1)`` and ``torch.argmax(a, 1)`` of ``randn(81920, 81920)``
(``M x 80, N x 80``; the TFLOPS column gives 6.7e9 elements, the memory column 64 % of 40 GiB
in fp32; argmax writes int64 indices). Each is one ATen ``reduce_kernel`` launch.
Elementwise: ``torch.add`` and ``torch.sub`` of two ``randn(1024, 1024, 1024)``,
``torch.nn.GELU()`` of one, ``torch.mul(a, 2)``, ``torch.div(a, 0.5)`` and ``torch.exp(a)`` of
``randn(2**30)``: one ATen elementwise kernel each (a division by a Python scalar multiplies by
its reciprocal); their READMEs' TFLOPS columns give 2^30 elements with the FLOPs ``main.py``
counts forward only (operators whose ``main.py`` has run their backward too, such as SiLU, are
left out). The numbers are copied from the READMEs at the commits named beside them, never
edited.
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
    """One README's nativetorch row: ``kerneltime`` and ``cputime`` in microseconds and the
    card's average power over the run (W; scripts/compare_published_flagperf_energy.py)."""

    op: str
    dtype: str
    kernel_us: float
    cpu_us: float
    commit: str
    power_w: float = 0.0


# (op folder, function, input shape, output shape)
SHAPES = {
    "sum": ("sum", (1024, 1024, 1024), (1,)),
    "mean": ("mean", (1024, 1024, 1024), (1,)),
    "max": ("max", (1024, 1024, 1024), (1,)),
    "min": ("min", (1024, 1024, 1024), (1,)),
    "amax": ("max", (81920, 81920), (81920,)),
    "argmax": ("argmax", (81920, 81920), (81920,)),
}
PUBLISHED = (
    Published("sum", "FP32", 2973.7, 2952.23, "10c7afd3c6cbaea2b530d57baccc9155e23f2414", 265.3),
    Published("sum", "FP16", 1567.74, 1546.68, "19dc383943108a681f75788de43368ffafc1438c", 280.13),
    Published("sum", "BF16", 1568.77, 1548.04, "10c7afd3c6cbaea2b530d57baccc9155e23f2414", 269.0),
    Published("mean", "FP32", 2973.7, 2951.85, "572fd7d8d2401132019bd1b145df521ab324ef94", 265.62),
    Published("mean", "FP16", 1576.96, 1555.63, "19dc383943108a681f75788de43368ffafc1438c", 278.62),
    Published("mean", "BF16", 1576.96, 1556.52, "0c1e8ea424e7e0cb0c154f6b31a92691b7fa0f7b", 267.38),
    Published("max", "FP32", 2982.91, 2961.98, "02a89b9bcd6b76bf761db5fc29625e8a490ac3d7", 278.13),
    Published("max", "FP16", 1612.8, 1590.38, "66eb17e4f4f1282c03f2f2ec17f61dba41cb3cee", 310.59),
    Published("max", "BF16", 1629.18, 1608.7, "66eb17e4f4f1282c03f2f2ec17f61dba41cb3cee", 307.06),
    Published("min", "FP32", 2983.94, 2962.03, "10c7afd3c6cbaea2b530d57baccc9155e23f2414", 276.53),
    Published("min", "FP16", 1611.78, 1590.4, "0c1e8ea424e7e0cb0c154f6b31a92691b7fa0f7b", 316.38),
    Published("min", "BF16", 1629.18, 1608.85, "0c1e8ea424e7e0cb0c154f6b31a92691b7fa0f7b", 308.19),
    Published(
        "amax", "FP32", 19630.08, 19601.09, "10c7afd3c6cbaea2b530d57baccc9155e23f2414", 268.39
    ),
    Published(
        "amax", "FP16", 10046.46, 10025.23, "66eb17e4f4f1282c03f2f2ec17f61dba41cb3cee", 319.51
    ),
    Published(
        "amax", "BF16", 10165.25, 10144.45, "10c7afd3c6cbaea2b530d57baccc9155e23f2414", 312.16
    ),
    Published(
        "argmax", "FP32", 19640.32, 19617.96, "572fd7d8d2401132019bd1b145df521ab324ef94", 323.32
    ),
    Published(
        "argmax", "FP16", 12191.74, 12174.38, "572fd7d8d2401132019bd1b145df521ab324ef94", 352.22
    ),
    Published(
        "argmax", "BF16", 12666.88, 12650.3, "572fd7d8d2401132019bd1b145df521ab324ef94", 330.6
    ),
)
# elementwise: (function, inputs, shape); mul and div by a Python scalar run ATen's multiply
# by a scalar (BinaryDivTrueKernel.cu multiplies by the reciprocal of a CPU scalar)
ELEMENTWISE = {
    "add": ("add", 2, (1024, 1024, 1024)),
    "sub": ("sub", 2, (1024, 1024, 1024)),
    "mul": ("scalar_mul", 1, (2**30,)),
    "div": ("scalar_mul", 1, (2**30,)),
    "gelu": ("gelu", 1, (1024, 1024, 1024)),
    "exp": ("exp", 1, (2**30,)),
}
PUBLISHED_ELEMENTWISE = (
    Published("add", "FP32", 9479.17, 9473.41, "0c1e8ea424e7e0cb0c154f6b31a92691b7fa0f7b", 255.59),
    Published("add", "FP16", 4747.26, 4734.18, "10c7afd3c6cbaea2b530d57baccc9155e23f2414", 268.62),
    Published("add", "BF16", 4746.24, 4740.34, "66eb17e4f4f1282c03f2f2ec17f61dba41cb3cee", 254.6),
    Published("sub", "FP32", 9479.17, 9477.43, "572fd7d8d2401132019bd1b145df521ab324ef94", 252.32),
    Published("sub", "FP16", 4748.29, 4729.07, "19dc383943108a681f75788de43368ffafc1438c", 260.7),
    Published("sub", "BF16", 4749.31, 4745.56, "10c7afd3c6cbaea2b530d57baccc9155e23f2414", 250.0),
    Published("mul", "FP32", 6197.25, 6195.24, "19dc383943108a681f75788de43368ffafc1438c", 261.31),
    Published("mul", "FP16", 3086.34, 3079.73, "10c7afd3c6cbaea2b530d57baccc9155e23f2414", 277.06),
    Published("mul", "BF16", 3087.36, 3081.14, "10c7afd3c6cbaea2b530d57baccc9155e23f2414", 265.39),
    Published("div", "FP32", 6197.25, 6195.3, "66eb17e4f4f1282c03f2f2ec17f61dba41cb3cee", 261.55),
    Published("div", "FP16", 3086.34, 3079.71, "572fd7d8d2401132019bd1b145df521ab324ef94", 277.1),
    Published("div", "BF16", 3087.36, 3081.16, "10c7afd3c6cbaea2b530d57baccc9155e23f2414", 265.39),
    Published("gelu", "FP32", 6140.93, 6137.1, "19dc383943108a681f75788de43368ffafc1438c", 325.82),
    Published("gelu", "FP16", 3280.9, 3277.56, "66eb17e4f4f1282c03f2f2ec17f61dba41cb3cee", 395.03),
    Published("gelu", "BF16", 3274.75, 3269.93, "10c7afd3c6cbaea2b530d57baccc9155e23f2414", 382.0),
    Published("exp", "FP32", 6193.15, 6191.55, "0c1e8ea424e7e0cb0c154f6b31a92691b7fa0f7b", 280.1),
    Published("exp", "FP16", 3113.98, 3108.24, "02a89b9bcd6b76bf761db5fc29625e8a490ac3d7", 317.84),
    Published("exp", "BF16", 3115.01, 3109.29, "10c7afd3c6cbaea2b530d57baccc9155e23f2414", 306.0),
)


def _shape(dims: tuple[int, ...]) -> str:
    return "x".join(str(d) for d in dims)


def _tensors(p: Published) -> tuple[str, str, str, tuple[int, ...]]:
    """(kind, function, tensors, input shape) of a published op."""
    dtype = DTYPES[p.dtype]
    if p.op in SHAPES:
        function, x, y = SHAPES[p.op]
        out = "int64" if function == "argmax" else dtype  # torch.argmax returns int64 indices
        tensors = f"input:{_shape(x)}:{dtype};output:{_shape(y)}:{out}"
        return "reduction", function, tensors, x
    function, inputs, x = ELEMENTWISE[p.op]
    tensor = f"{_shape(x)}:{dtype}"
    tensors = ";".join([f"input:{tensor}"] * inputs + [f"output:{tensor}"])
    return "elementwise", function, tensors, x


def op_row(p: Published) -> dict[str, object]:
    """The op-table row of one published timing (``time`` in ms, the kernel time)."""
    dtype = DTYPES[p.dtype]
    kind, function, tensors, x = _tensors(p)
    attrs = {"function": function, "l2_dirty_bytes": FLUSH_BYTES}
    return {
        "name": p.op,
        "kind": kind,
        "phase": "inference",
        "tensors": tensors,
        "attrs": json.dumps(attrs),
        "time": round(p.kernel_us / 1000.0, 8),
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
    rows = [op_row(p) for p in (*PUBLISHED, *PUBLISHED_ELEMENTWISE)]
    write_table(args.out / "flagperf_a100.csv", OP_TABLE_COLUMNS, rows)
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("convert_flagperf", main)
