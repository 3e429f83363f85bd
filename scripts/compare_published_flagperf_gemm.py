"""FlagPerf's published A100 40GB GEMM timings against effective_roofline on ``a100_40gb_sxm``.

Usage: python scripts/compare_published_flagperf_gemm.py

BAAI FlagPerf (github.com/FlagOpen/FlagPerf, Apache-2.0) times ``torch.mm`` of two
``randn(8192, 8192)`` and ``torch.bmm`` of two ``randn(2, 4096, 4096)`` on one A100-40GiB-SXM of a
DGX A100 (``operation/benchmarks/{mm,bmm}/nvidia/A100_40_SXM/<DTYPE>_README.md``, the commits
beside each row): the ``nativetorch`` row's Triton ``do_bench`` median. The two ``mm`` rows are
the training rows of the config's power-limited clock (``scripts/fit_published_sustained.py``,
published_sustained_data.py); the ``bmm`` rows are held out. The bmm FP32 row is an FP32 SGEMM
(19.13 TFLOP/s, 98 % of the 19.5 TFLOP/s SIMT peak, at 340 W: below the power limit). The
suite's ``mm`` FP32 row (127 TFLOP/s) ran on the TF32 tensor cores in a later run and is left
out; so are its other GEMM operators.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from opmodel import DType, LocalOp, OpKind, Phase, TensorRole, TensorSpec
from opmodel.hardware import load_hardware
from opmodel.models import get_model

HARDWARE = "a100_40gb_sxm"


class Row(NamedTuple):
    """One published GEMM: ``batch`` x (m x k) @ (k x n), its kernel time and the README commit."""

    op: str
    dtype: str
    batch: int
    size: int
    kernel_us: float
    commit: str
    split: str
    cpu_us: float = 0.0  # wall clock per call over back-to-back calls
    power_w: float = 0.0  # the card's average power over them


ROWS = (
    Row(
        "mm",
        "fp16",
        1,
        8192,
        4268.03,
        "66eb17e4f4f1282c03f2f2ec17f61dba41cb3cee",
        "training",
        4296.02,
        396.67,
    ),
    Row(
        "mm",
        "bf16",
        1,
        8192,
        4146.18,
        "10c7afd3c6cbaea2b530d57baccc9155e23f2414",
        "training",
        4177.02,
        392.9,
    ),
    Row(
        "bmm",
        "fp16",
        2,
        4096,
        1094.66,
        "0c1e8ea424e7e0cb0c154f6b31a92691b7fa0f7b",
        "held-out",
        1139.21,
        395.78,
    ),
    Row(
        "bmm",
        "bf16",
        2,
        4096,
        1069.06,
        "10c7afd3c6cbaea2b530d57baccc9155e23f2414",
        "held-out",
        1109.81,
        396.18,
    ),
    Row(
        "bmm",
        "fp32",
        2,
        4096,
        14369.79,
        "19dc383943108a681f75788de43368ffafc1438c",
        "held-out",
        14366.06,
        339.56,
    ),
)


def op_of(row: Row) -> LocalOp:
    """The row's GEMM or batched GEMM (square, row-major operands)."""
    n = row.size
    lead = () if row.batch == 1 else (row.batch,)
    roles = (TensorRole.INPUT, TensorRole.WEIGHT, TensorRole.OUTPUT)
    tensors = tuple(TensorSpec(role, (*lead, n, n), DType(row.dtype)) for role in roles)
    kind = OpKind.GEMM if row.batch == 1 else OpKind.BATCHED_GEMM
    return LocalOp(name=row.op, kind=kind, phase=Phase.INFERENCE, tensors=tensors)


def ratios() -> list[tuple[Row, float, float]]:
    """(row, published TFLOP/s, modelled / published time) of every row."""
    spec, model = load_hardware(HARDWARE), get_model("effective_roofline")
    out = []
    for row in ROWS:
        flops = 2 * row.batch * row.size**3
        predicted = model.predict(op_of(row), spec).latency_s
        out.append((row, flops / (row.kernel_us * 1e-6) / 1e12, predicted / (row.kernel_us * 1e-6)))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    del argv
    print(f"{'op':<5}{'dtype':<6}{'shape':<14}{'split':<10}{'TFLOP/s':>9}{'model/measured':>16}")
    for row, tflops, ratio in ratios():
        shape = f"{row.batch}x{row.size}^3"
        print(f"{row.op:<5}{row.dtype:<6}{shape:<14}{row.split:<10}{tflops:>9.1f}{ratio:>15.3f}x")
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("compare_published_flagperf_gemm", main)
