"""Published square ``torch.mm`` throughputs (TFLOP/s) that ``compare_published_torch_mm.py``
and the fits it names read.

Source: torch-performance-test-data (github.com/zzc0721/torch-performance-test-data), test.py
(commit 17b02a91b724248e3db59d09968d302b7eab557c): ``torch.mm`` of two ``torch.randn`` N x N
matrices, 6 warm-up and 30 timed calls with a synchronisation around them, N from 1,024 to
10,240 (FP32 with TF32 off, then TF32 on, FP16, BF16), wall clock around the 30 calls.

- ``RUNS``: runs whose issue publishes every size ("详细性能数据"), one community run each:
  #185 (NVIDIA A40, PyTorch 2.11, 2026-07-22), #78 (NVIDIA GeForce RTX 4090, PyTorch 2.7,
  2025-10-17), #108 (NVIDIA A100-PCIE-40GB, PyTorch 2.8, 2026-01-05), #79 (NVIDIA H100 80GB
  HBM3, PyTorch 2.7, 2025-10-18, in a Docker container), #95 (NVIDIA H100 PCIe, PyTorch 2.9,
  2025-12-14, a physical machine) and #112 (NVIDIA H800 PCIe, PyTorch 2.8, 2026-01-05: GH100 with
  114 SMs and the H100 PCIe's 350 W limit, NVLink cut; predicted on ``h100_pcie``), #120 (NVIDIA
  L4, PyTorch 2.9, 2026-01-12, a physical machine).
- ``BEST``: the repository's database.md (commit 078586871da31ad6aaaf6fa43bc4ec3f284b151d), the
  best of the five sizes per dtype (FP32, FP16, BF16; no TF32 column), for the boards a shipped
  config describes, 24 GB GeForce boards only (the 48 GB ones are modified boards). The H100
  row of HaxxorCialtion's PyTorch 2.8 run gives 403.74 TFLOP/s for FP32, six times the FP32
  peak: TF32 was on, so that cell is left out.
"""

from __future__ import annotations

from dataclasses import dataclass

SIZES = (1024, 2048, 4096, 8192, 10240)


@dataclass(frozen=True, slots=True)
class Run:
    """One published run of every size: the config that predicts it, its issue and, per dtype
    ("tf32": FP32 inputs with TF32 math), the TFLOP/s at ``SIZES``."""

    config: str
    issue: int
    tflops: dict[str, tuple[float, ...]]


RUNS: dict[str, Run] = {
    "a40": Run(
        "a40",
        185,
        {
            "fp32": (17.05, 21.44, 23.01, 23.73, 22.82),
            "tf32": (38.65, 43.80, 54.88, 59.52, 59.39),
            "fp16": (85.02, 94.31, 113.51, 108.47, 119.18),
            "bf16": (82.35, 95.47, 115.16, 110.64, 122.29),
        },
    ),
    "rtx4090": Run(
        "rtx4090",
        78,
        {
            "fp32": (45.89, 53.84, 53.02, 53.41, 51.43),
            "tf32": (59.47, 69.24, 84.44, 85.65, 84.50),
            "fp16": (106.10, 159.38, 168.38, 155.50, 156.88),
            "bf16": (126.84, 164.81, 151.50, 160.17, 158.54),
        },
    ),
    "a100_40gb_pcie": Run(
        "a100_40gb_pcie",
        108,
        {
            "fp32": (8.99, 9.69, 15.52, 17.56, 16.67),
            "tf32": (61.02, 90.82, 108.32, 97.32, 102.05),
            "fp16": (83.66, 214.73, 241.49, 197.51, 205.66),
            "bf16": (94.89, 138.46, 234.14, 215.26, 211.72),
        },
    ),
    "h100_sxm": Run(
        "h100_sxm",
        79,
        {
            "fp32": (37.39, 49.58, 51.88, 51.81, 49.61),
            "tf32": (119.60, 334.99, 402.15, 372.05, 376.66),
            "fp16": (179.13, 645.12, 760.04, 736.19, 668.42),
            "bf16": (176.62, 676.59, 788.72, 797.51, 719.72),
        },
    ),
    "h100_pcie": Run(
        "h100_pcie",
        95,
        {
            "fp32": (27.44, 33.31, 36.51, 36.95, 35.80),
            "tf32": (91.00, 176.95, 234.80, 240.43, 225.65),
            "fp16": (201.71, 458.03, 457.32, 437.07, 449.65),
            "bf16": (217.70, 449.09, 495.93, 492.84, 471.79),
        },
    ),
    "h800_pcie": Run(
        "h100_pcie",
        112,
        {
            "fp32": (27.62, 33.41, 37.22, 37.77, 36.60),
            "tf32": (99.71, 180.40, 237.09, 242.83, 229.82),
            "fp16": (159.05, 465.20, 478.23, 470.26, 462.26),
            "bf16": (170.73, 483.89, 503.83, 499.46, 487.22),
        },
    ),
    "l4": Run(
        "l4",
        120,
        {
            "fp32": (12.87, 15.38, 12.53, 10.66, 11.11),
            "tf32": (14.21, 31.88, 24.00, 25.69, 26.17),
            "fp16": (54.81, 68.83, 53.02, 53.80, 52.47),
            "bf16": (54.42, 70.89, 54.91, 59.40, 56.90),
        },
    ),
}

# (run, dtype) whose GEMMs of at least TRAINING_TFLOP trained a fitted value: the power-limited
# clock (scripts/fit_published_sustained.py) and the SIMT share (scripts/fit_simt_fraction.py)
CLOCK_TRAINING = {(run, d) for run in ("a40", "h100_pcie", "l4") for d in ("fp16", "bf16")}
SIMT_TRAINING = {("a40", "fp32"), ("h100_sxm", "fp32")}
TRAINING_TFLOP = 1.0


def training(run: str, dtype: str, n: int) -> bool:
    """Whether ``run``'s ``n``^3 GEMM in ``dtype`` trained a fitted value."""
    fitted = (run, dtype) in CLOCK_TRAINING or (run, dtype) in SIMT_TRAINING
    return fitted and 2 * n**3 >= TRAINING_TFLOP * 1e12


@dataclass(frozen=True, slots=True)
class Best:
    """One database.md row: the config, who ran it where, and its best TFLOP/s per dtype."""

    config: str
    contributor: str
    where: str
    tflops: dict[str, float]


BEST: tuple[Best, ...] = (
    Best(
        "b200",
        "zzc0208",
        "GCP a4-highgpu-8g, PyTorch 2.8",
        {"fp32": 66.24, "fp16": 1627.64, "bf16": 1696.03},
    ),
    Best(
        "a100_80gb_sxm",
        "aiguoliuguo",
        "Docker, PyTorch 2.8",
        {"fp32": 19.18, "fp16": 258.74, "bf16": 264.53},
    ),
    Best("h100_sxm", "HaxxorCialtion", "Docker, PyTorch 2.8", {"fp16": 761.84, "bf16": 789.24}),
    Best(
        "h100_sxm", "clow1710", "physical machine", {"fp32": 52.11, "fp16": 758.14, "bf16": 783.66}
    ),
    Best("h200_sxm", "Mightlaus", "Docker", {"fp32": 51.34, "fp16": 759.40, "bf16": 790.29}),
    Best("l40s", "Mightlaus", "Docker", {"fp32": 46.88, "fp16": 264.02, "bf16": 269.15}),
    Best(
        "rtx3090",
        "zzc0208",
        "physical machine, PyTorch 2.6",
        {"fp32": 24.46, "fp16": 75.64, "bf16": 76.34},
    ),
    Best(
        "rtx3090",
        "a-cold-bird",
        "cloud, PyTorch 2.8",
        {"fp32": 24.84, "fp16": 75.88, "bf16": 76.68},
    ),
    Best("rtx3090", "Mightlaus", "physical machine", {"fp32": 24.79, "fp16": 75.48, "bf16": 76.58}),
    Best(
        "rtx4090",
        "aiguoliuguo",
        "physical machine, PyTorch 2.4",
        {"fp32": 55.01, "fp16": 165.08, "bf16": 170.06},
    ),
    Best(
        "rtx4090",
        "sd0ric4",
        "physical machine, PyTorch 2.4.1",
        {"fp32": 54.77, "fp16": 171.06, "bf16": 173.31},
    ),
    Best(
        "rtx4090",
        "HuanLinOTO",
        "Docker cloud, PyTorch 2.4",
        {"fp32": 46.48, "fp16": 162.35, "bf16": 162.39},
    ),
    Best(
        "rtx4090",
        "a-cold-bird",
        "cloud, PyTorch 2.8",
        {"fp32": 54.67, "fp16": 167.80, "bf16": 163.09},
    ),
)
