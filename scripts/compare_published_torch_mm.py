"""Square ``torch.mm`` runs from a published community benchmark against effective_roofline, in
every dtype it times: FP32 (SIMT, TF32 off), TF32, FP16 and BF16.

Usage: python scripts/compare_published_torch_mm.py

The runs, their sources and the database's best figures are in ``published_torch_mm_data.py``.
Training rows (printed as such), each GEMM of at least 1 TFLOP: the A40's (issue #185) and the
H100 PCIe's (issue #95) FP16 and BF16 ones trained those configs' power-limited clocks
(scripts/fit_published_sustained.py); the A40's and the H100 SXM's (issue #79) FP32 ones the
SIMT GEMMs' share of the FP32 peak (scripts/fit_simt_fraction.py). Every other row is held out,
the H800 PCIe's run (issue #112) and the database's best figures entirely (docs/validation.md,
"Square torch.mm runs").
"""

from __future__ import annotations

from dataclasses import dataclass

from published_torch_mm_data import BEST, RUNS, SIZES, TRAINING_TFLOP, training
from ratio_summary import print_ratio_groups

from opmodel import ops
from opmodel.core.op import LocalOp
from opmodel.hardware import load_hardware
from opmodel.hardware.spec import HardwareSpec
from opmodel.models import get_model


@dataclass(frozen=True, slots=True)
class Row:
    """One published square GEMM and the model's time for it."""

    run: str
    config: str
    dtype: str
    n: int
    measured_s: float
    model_s: float
    kernel: str
    training: bool

    @property
    def ratio(self) -> float:
        """Model over published time."""
        return self.model_s / self.measured_s


def _op(n: int, dtype: str) -> LocalOp:
    if dtype == "tf32":
        return ops.gemm(n, n, n, "fp32", compute_dtype="tf32")
    return ops.gemm(n, n, n, dtype)


def _model_s(n: int, dtype: str, hardware: HardwareSpec) -> tuple[float, str]:
    profile = get_model("effective_roofline").predict(_op(n, dtype), hardware)
    return profile.latency_s, profile.implementation.rpartition("/")[2]


def compare() -> list[Row]:
    """Every published run's rows under ``effective_roofline`` on its shipped config."""
    rows = []
    for name, run in RUNS.items():
        hardware = load_hardware(run.config)
        for dtype, tflops in run.tflops.items():
            for n, tf in zip(SIZES, tflops, strict=True):
                model_s, kernel = _model_s(n, dtype, hardware)
                rows.append(Row(name, run.config, dtype, n, 2 * n**3 / (tf * 1e12), model_s,
                                kernel, training(name, dtype, n)))  # fmt: skip
    return rows


def large_16bit(rows: list[Row]) -> dict[str, list[float]]:
    """Each run's held-out FP16 and BF16 GEMMs of at least 1 TFLOP: the ones whose 30 calls
    last long enough (70-150 ms at 8,192^3-10,240^3) to hold a board at its power limit."""
    groups: dict[str, list[float]] = {}
    for r in rows:
        large = 2 * r.n**3 >= TRAINING_TFLOP * 1e12
        if not r.training and r.dtype in ("fp16", "bf16") and large:
            groups.setdefault(f"{r.run} 16-bit >= 1 TFLOP", []).append(r.ratio)
    return groups


def best_ratios() -> list[tuple[str, str, str, float]]:
    """(config, contributor, dtype, ratio) for each database figure: the published best
    throughput over the model's best over ``SIZES``, a time ratio as the others (below 1: the
    model is too fast)."""
    out = []
    for best in BEST:
        hardware = load_hardware(best.config)
        for dtype, tf in best.tflops.items():
            model = max(2 * n**3 / _model_s(n, dtype, hardware)[0] / 1e12 for n in SIZES)
            out.append((best.config, best.contributor, dtype, tf / model))
    return out


def main() -> int:
    rows = compare()
    print("Published square torch.mm runs (torch-performance-test-data) against effective_roofline")
    print(f"{'run':<15} {'dtype':<5} {'n':>6} {'published us':>12} {'model us':>10}  ratio  kernel")
    for r in rows:
        mark = "  (training: a fitted clock or SIMT share)" if r.training else ""
        print(f"{r.run:<15} {r.dtype:<5} {r.n:>6} {r.measured_s * 1e6:12.1f} "
              f"{r.model_s * 1e6:10.1f} {r.ratio:5.2f}x  {r.kernel}{mark}")  # fmt: skip
    groups: dict[str, list[float]] = {}
    for r in rows:
        if not r.training:
            groups.setdefault(f"{r.run} {r.dtype}", []).append(r.ratio)
    print_ratio_groups(groups, 22)
    print_ratio_groups(large_16bit(rows), 32)
    print("\nBest of the five sizes (database.md), model time over published time:")
    best: dict[str, list[float]] = {}
    for config, contributor, dtype, ratio in best_ratios():
        print(f"  {config:<15} {contributor:<15} {dtype:<5} {ratio:5.2f}x")
        best.setdefault(f"best {config} {dtype}", []).append(ratio)
    print_ratio_groups(best, 26)
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("compare_published_torch_mm", main)
