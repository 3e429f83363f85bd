"""The A100-SXM4-80GB's power-limited SM clock, fitted on Microsoft's published cuBLASLt table.

Usage: python scripts/fit_published_power_clock.py [--min-tflop 1.0] [--hardware a100_80gb_sxm]
(--hardware: the shipped config or your own YAML of an A100-SXM4-80GB; the table is that GPU's)

The figures are the table "GEMM CuBLASLt" of Microsoft's Azure AI benchmarking guide, results
for an ND A100 v4 VM (github.com/Azure/AI-benchmarking-guide, Azure_Results/ND_A100_v4_results.md,
commit 3bb66cacc25632d8ece36bc1d5128c5ea886a60b): NVIDIA A100-SXM4-80GB, driver 550.90.07,
CUDA 12.5, superbenchmark's ``cublaslt_gemm`` in FP16 with random inputs, batch 1, 10,000
warm-up and 1,000 timed iterations, clocks not locked. Back-to-back GEMMs of that length hold
the board at its 400 W limit, so their throughput measures the clock the board sustains under
dense 16-bit tensor work with random data, which is what ``compute.power_limited_clock_hz``
means (docs/hardware.md).

Declared split: the GEMMs of at least ``--min-tflop`` TFLOP (8192^3, 16384^3 and
6144 x 12288 x 12288 with the default 1.0) are the training rows, where the tensor cores stay
busy from start to end (the clock law then gives the fitted clock itself); the other five rows
are held out. The fit is :func:`opmodel.validation.power_clock_fit.fit_power_limited_clock_hz`
(15 MHz bins, least squared relative error of ``effective_roofline``), the same search that
``validate-gemm-latency --fit-power-clock`` runs on unlocked validation rows. No validation
dataset of this project takes part.

Printed: each row with its split, the published and predicted TFLOP/s at the fitted clock and
their ratio; the fitted clock and the value the shipped config carries.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.op import LocalOp, TensorSpec
from opmodel.hardware import load_hardware
from opmodel.hardware.spec import HardwareSpec
from opmodel.models import get_model
from opmodel.validation.power_clock_fit import (
    FIT_MODEL,
    fit_power_limited_clock_hz,
    with_power_limited_clock,
)

# (m, n, k) -> TFLOP/s, ND A100 v4 (A100-SXM4-80GB), FP16 cuBLASLt, random inputs
PUBLISHED: tuple[tuple[int, int, int, float], ...] = (
    (1024, 1024, 1024, 119.4),
    (2048, 2048, 2048, 221.8),
    (4096, 4096, 4096, 228.0),
    (8192, 8192, 8192, 253.7),
    (16384, 16384, 16384, 256.5),
    (1024, 2145, 1024, 132.8),
    (6144, 12288, 12288, 250.8),
    (802816, 192, 768, 157.8),
)


@dataclass(frozen=True, slots=True)
class Row:
    """One published GEMM, its split and the model's throughput at the fitted clock."""

    m: int
    n: int
    k: int
    published_tflops: float
    training: bool
    predicted_tflops: float

    @property
    def ratio(self) -> float:
        """Predicted over published throughput (above 1: the model is too fast)."""
        return self.predicted_tflops / self.published_tflops


def gemm_op(m: int, n: int, k: int) -> LocalOp:
    """C[m, n] = A[m, k] @ B[k, n] in fp16."""
    return LocalOp(
        name=f"gemm_{m}x{n}x{k}",
        kind=OpKind.GEMM,
        phase=Phase.INFERENCE,
        tensors=(
            TensorSpec(TensorRole.INPUT, (m, k), DType.FP16),
            TensorSpec(TensorRole.WEIGHT, (k, n), DType.FP16),
            TensorSpec(TensorRole.OUTPUT, (m, n), DType.FP16),
        ),
    )


def tflop(m: int, n: int, k: int) -> float:
    """The GEMM's work in TFLOP (2 m n k)."""
    return 2 * m * n * k / 1e12


def fit(hardware: HardwareSpec, min_tflop: float) -> tuple[float, list[Row]]:
    """The fitted clock and every published row at it."""
    if not min_tflop > 0:
        raise SystemExit(f"--min-tflop must be positive (got {min_tflop})")
    train = [p for p in PUBLISHED if tflop(*p[:3]) >= min_tflop]
    if not train:
        raise SystemExit(f"--min-tflop {min_tflop}: no published GEMM is that large")
    clock_hz = fit_power_limited_clock_hz(
        hardware,
        [gemm_op(m, n, k) for m, n, k, _ in train],
        [tflop(m, n, k) / tf for m, n, k, tf in train],
    )
    spec = with_power_limited_clock(hardware, clock_hz)
    model = get_model(FIT_MODEL)
    rows = [
        Row(
            m=m,
            n=n,
            k=k,
            published_tflops=tf,
            training=tflop(m, n, k) >= min_tflop,
            predicted_tflops=tflop(m, n, k) / model.predict(gemm_op(m, n, k), spec).latency_s,
        )
        for m, n, k, tf in PUBLISHED
    ]
    return clock_hz, rows


def main(argv: list[str] | None = None) -> int:
    """Print the rows and the fitted clock."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--min-tflop", type=float, default=1.0, help="training rows from here")
    parser.add_argument(
        "--hardware", default="a100_80gb_sxm", help="an A100-SXM4-80GB config: name or YAML path"
    )
    args = parser.parse_args(argv)
    hardware = load_hardware(args.hardware)
    clock_hz, rows = fit(hardware, args.min_tflop)
    print(f"{'m':>7} {'n':>6} {'k':>6}  split     published  predicted  ratio")
    for r in rows:
        split = "training" if r.training else "held-out"
        print(
            f"{r.m:>7} {r.n:>6} {r.k:>6}  {split}  {r.published_tflops:9.1f}  "
            f"{r.predicted_tflops:9.1f}  {r.ratio:5.3f}"
        )
    shipped = hardware.compute.power_limited_clock_hz
    print(f"fitted power-limited clock: {clock_hz / 1e6:.0f} MHz ({FIT_MODEL})")
    print(f"{hardware.name} ships: {shipped / 1e6:.0f} MHz" if shipped else "config: unset")
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("fit_published_power_clock", main)
