"""Square ``torch.mm`` runs from a published community benchmark against effective_roofline, in
every dtype it times: FP32 (SIMT, TF32 off), TF32, FP16 and BF16.

Usage: python scripts/compare_published_torch_mm.py

Source: torch-performance-test-data (github.com/zzc0721/torch-performance-test-data), test.py:
``torch.mm`` of two ``torch.randn`` N x N matrices, 6 warm-up and 30 timed calls with a
synchronisation around them, N from 1,024 to 10,240 (FP32 with TF32 off, then TF32 on): issue
#185 (NVIDIA A40, PyTorch 2.11, 2026-07-22), #78 (NVIDIA GeForce RTX 4090, PyTorch 2.7,
2025-10-17), #108 (NVIDIA A100-PCIE-40GB, PyTorch 2.8, 2026-01-05) and #79 (NVIDIA H100 80GB
HBM3, PyTorch 2.7, 2025-10-18, in a Docker container), one community run each.
The A40's FP16 and BF16 GEMMs of at least 1 TFLOP trained its shipped power-limited clock
(scripts/fit_published_sustained.py), its FP32 ones of that size the SIMT GEMMs' share of the
FP32 peak on sm_86 and sm_89 (scripts/fit_simt_fraction.py); they are printed as training rows,
every other row is held out (docs/validation.md, "Square torch.mm runs").
"""

from __future__ import annotations

from dataclasses import dataclass

from published_sustained_data import GEMMS
from ratio_summary import print_ratio_groups

from opmodel import ops
from opmodel.core.dtypes import DType
from opmodel.core.op import LocalOp
from opmodel.hardware import load_hardware
from opmodel.models import get_model

SIZES = (1024, 2048, 4096, 8192, 10240)
# config -> dtype -> the published TFLOP/s at SIZES ("tf32": FP32 inputs with TF32 math)
PUBLISHED: dict[str, dict[str, tuple[float, ...]]] = {
    "a40": {  # issue #185; FP16 and BF16 as in published_sustained_data.py
        "fp32": (17.05, 21.44, 23.01, 23.73, 22.82),
        "tf32": (38.65, 43.80, 54.88, 59.52, 59.39),
        "fp16": tuple(t for *_, t in GEMMS["a40"][1][DType.FP16]),
        "bf16": tuple(t for *_, t in GEMMS["a40"][1][DType.BF16]),
    },
    "rtx4090": {  # issue #78
        "fp32": (45.89, 53.84, 53.02, 53.41, 51.43),
        "tf32": (59.47, 69.24, 84.44, 85.65, 84.50),
        "fp16": (106.10, 159.38, 168.38, 155.50, 156.88),
        "bf16": (126.84, 164.81, 151.50, 160.17, 158.54),
    },
    "a100_40gb_pcie": {  # issue #108
        "fp32": (8.99, 9.69, 15.52, 17.56, 16.67),
        "tf32": (61.02, 90.82, 108.32, 97.32, 102.05),
        "fp16": (83.66, 214.73, 241.49, 197.51, 205.66),
        "bf16": (94.89, 138.46, 234.14, 215.26, 211.72),
    },
    "h100_sxm": {  # issue #79
        "fp32": (37.39, 49.58, 51.88, 51.81, 49.61),
        "tf32": (119.60, 334.99, 402.15, 372.05, 376.66),
        "fp16": (179.13, 645.12, 760.04, 736.19, 668.42),
        "bf16": (176.62, 676.59, 788.72, 797.51, 719.72),
    },
}
TRAINING_TFLOP = 1.0  # the A40 clock's rule (fit_published_sustained.py --min-tflop)


@dataclass(frozen=True, slots=True)
class Row:
    """One published square GEMM and the model's time for it."""

    hardware: str
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


def compare() -> list[Row]:
    """Every published row under ``effective_roofline`` on its shipped config."""
    model, rows = get_model("effective_roofline"), []
    for name, tables in PUBLISHED.items():
        hardware = load_hardware(name)
        for dtype, tflops in tables.items():
            for n, tf in zip(SIZES, tflops, strict=True):
                work = 2 * n**3
                profile = model.predict(_op(n, dtype), hardware)
                # the A40's runs of >= 1 TFLOP trained its clock (FP16, BF16) and the SIMT share
                training = name == "a40" and dtype != "tf32" and work >= 1e12
                kernel = profile.implementation.rpartition("/")[2]
                rows.append(Row(name, dtype, n, work / (tf * 1e12), profile.latency_s, kernel,
                                training))  # fmt: skip
    return rows


def main() -> int:
    rows = compare()
    print("Published square torch.mm runs (torch-performance-test-data) against effective_roofline")
    print(
        f"{'config':<15} {'dtype':<5} {'n':>6} {'published us':>12} {'model us':>10}  ratio  kernel"
    )
    for r in rows:
        mark = "  (training: the A40's clock or SIMT share)" if r.training else ""
        print(f"{r.hardware:<15} {r.dtype:<5} {r.n:>6} {r.measured_s * 1e6:12.1f} "
              f"{r.model_s * 1e6:10.1f} {r.ratio:5.2f}x  {r.kernel}{mark}")  # fmt: skip
    groups: dict[str, list[float]] = {}
    for r in rows:
        if not r.training:
            groups.setdefault(f"{r.hardware} {r.dtype}", []).append(r.ratio)
    print_ratio_groups(groups, 22)
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("compare_published_torch_mm", main)
