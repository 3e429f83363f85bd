"""The published figures ``fit_published_sustained.py`` fits a GPU's sustained operating point
on.

- Microsoft's Azure AI benchmarking guide (github.com/Azure/AI-benchmarking-guide), results of
  ND A100 v4 (Azure_Results/ND_A100_v4_results.md, commit
  3bb66cacc25632d8ece36bc1d5128c5ea886a60b; A100-SXM4-80GB), ND H100 v5 ("Azure Results/"
  ND_H100_v5_results.md, f350e7e65b82cfcb9220b32b582bc34342d9c1a6), ND H200 v5
  (Azure_Results/ND_H200_v5_results.md, 7f20e5fa3b2f9a46d8404af1f6fb14b049d6d5cc) and ND GB200
  v6 (Azure_Results/ND_GB200_v6_results.md, 2a370be6de9586d365feed77e014a73f25198f4d; "NVIDIA
  GB200 185GB", FP8 with random inputs and 10,000 warm-up iterations; no stream figure).
- A40: torch-performance-test-data (github.com/zzc0721/torch-performance-test-data), issue #185
  ("NVIDIA A40", 2026-07-22, PyTorch 2.11 with CUDA 12.8): ``torch.mm`` of square FP16 and BF16
  matrices of ``torch.randn``, 6 warm-up and 30 timed calls, wall clock around the 30 with a
  synchronisation (test.py, commit 17b02a91b724248e3db59d09968d302b7eab557c). A single
  community run: its 30 calls of the largest size hold the board at its 300 W limit for about
  0.5 s. The same source's best figures for the A100-SXM4-80GB (264.5 TFLOP/s bf16), H100
  (783-789) and H200 (790) lie about 4 % above what effective_roofline gives those GPUs at
  their shipped sustained clocks (253, 754, 755 at 8192-10240), so its short runs hold a
  little more clock than a sustained load; the A40's value inherits that. It publishes no
  stream figures; gpu-benches' A40 read stream (679 GB/s; scripts/compare_published_streams.py)
  is above the model's, so there is no HBM fraction.
- H100 PCIe: the same source's issue #95 ("NVIDIA H100 PCIe", 2025-12-14, PyTorch 2.9 with CUDA
  12.8, a physical machine), the same ``torch.mm`` runs. The board's 350 W limit holds its
  large FP16 and BF16 GEMMs at 58-66 % of the 756.5 TFLOPS rating (the model at the rating
  clock: 93 %). Issue #112 ("NVIDIA H800 PCIe", 2026-01-05, PyTorch 2.8: GH100 with 114 SMs and
  the same 350 W limit, NVLink cut) is held out on this config. No stream figure; gpu-benches'
  H100 PCIe stream (scripts/compare_published_streams.py) is the config's bandwidth check.
- A100 40GB SXM (``a100_40gb_sxm``): BAAI FlagPerf (github.com/FlagOpen/FlagPerf, Apache-2.0),
  ``operation/benchmarks/mm/nvidia/A100_40_SXM/{FP16,BF16}_README.md`` (commits 66eb17e4 and
  10c7afd3): ``torch.mm`` of two ``randn(8192, 8192)`` on one A100-40GiB-SXM of a DGX A100, the
  ``nativetorch`` row's Triton ``do_bench`` median of 1,000 calls after 10 warm-ups (4268.03
  and 4146.18 us: 257.6 and 265.2 TFLOP/s, the board at 393-397 W of its 400 W). Held out: the
  same suite's ``torch.bmm`` of 2 x 4096^3 (scripts/compare_published_flagperf_gemm.py). No
  stream figure; its reductions and elementwise rows are held-out validation rows
  (data/ops/flagperf), not a fraction's split.
- L4: the same source's issue #120 ("NVIDIA L4", 2026-01-12, PyTorch 2.9, a physical machine).
  The 72 W board holds its large FP16 and BF16 GEMMs at 43-49 % of the 121 TFLOPS rating; its
  2,048^3 runs, 30 calls in 8 ms, reach 57-59 %. The only L4 run with every size: the split is
  within it, as the A40's.
"""

from __future__ import annotations

from published_torch_mm_data import RUNS, SIZES

from opmodel.core.dtypes import DType
from opmodel.validation.hbm_split import HBM_FRACTION_SPLITS

ELEMENTS = 2**25  # BabelStream's default array length (doubles)
DOT_BYTES = 2 * ELEMENTS * 8  # Dot reads two arrays
KERNELS = ("Copy", "Mul", "Add", "Triad", "Dot")
# config -> BabelStream TB/s (Copy, Mul, Add, Triad, Dot)
STREAM: dict[str, tuple[float, float, float, float, float]] = {
    "a100_80gb_sxm": (1.61, 1.61, 1.70, 1.70, 1.75),
    "h100_sxm": (2.90, 2.90, 2.97, 2.97, 3.18),
    "h200_sxm": (4.01, 4.00, 4.15, 4.15, 4.48),
}


def _torch_mm(run: str) -> dict[DType, tuple[tuple[int, int, int, float], ...]]:
    """The FP16 and BF16 rows of a published ``torch.mm`` run (published_torch_mm_data.py)."""
    tables = RUNS[run].tflops
    return {
        dtype: tuple((n, n, n, tf) for n, tf in zip(SIZES, tables[dtype.value], strict=True))
        for dtype in (DType.FP16, DType.BF16)
    }


# config -> (clock dtype: None for the general clock, rows of (m, n, k, TFLOP/s)) per input dtype
GEMMS: dict[str, tuple[DType | None, dict[DType, tuple[tuple[int, int, int, float], ...]]]] = {
    "a100_80gb_sxm": (
        None,
        {
            DType.FP16: (
                (1024, 1024, 1024, 119.4),
                (2048, 2048, 2048, 221.8),
                (4096, 4096, 4096, 228.0),
                (8192, 8192, 8192, 253.7),
                (16384, 16384, 16384, 256.5),
                (1024, 2145, 1024, 132.8),
                (6144, 12288, 12288, 250.8),
                (802816, 192, 768, 157.8),
            )
        },
    ),
    "h100_sxm": (
        DType.FP8,
        {
            DType.FP8_E4M3: (
                (1024, 1024, 1024, 274.1),
                (2048, 2048, 2048, 1011.3),
                (4096, 4096, 4096, 1216.9),
                (8192, 8192, 8192, 1290.1),
                (16384, 16384, 16384, 1377.3),
                (32768, 32768, 32768, 1382.2),
                (1024, 2145, 1024, 410.7),
                (6144, 12288, 12288, 1351.4),
                (802816, 192, 768, 663.8),
            )
        },
    ),
    "h200_sxm": (
        DType.FP8,
        {
            DType.FP8_E4M3: (
                (1024, 1024, 1024, 290.8),
                (2048, 2048, 2048, 1013.4),
                (4096, 4096, 4096, 1249.1),
                (8192, 8192, 8192, 1300.6),
                (16384, 16384, 16384, 1366.3),
                (32768, 32768, 32768, 1349.5),
                (1024, 2145, 1024, 407.9),
                (6144, 12288, 12288, 1318.0),
                (802816, 192, 768, 717.5),
            )
        },
    ),
    "gb200": (
        DType.FP8,
        {
            DType.FP8_E4M3: (
                (1024, 1024, 1024, 489.2),
                (2048, 2048, 2048, 2243.6),
                (4096, 4096, 4096, 2834.6),
                (8192, 8192, 8192, 2876.6),
                (16384, 16384, 16384, 2906.9),
                (32768, 32768, 32768, 2825.6),
                (1024, 2145, 1024, 1022.2),
                (6144, 12288, 12288, 2895.6),
                (802816, 192, 768, 1459.5),
            )
        },
    ),
    "h100_pcie": (None, _torch_mm("h100_pcie")),
    "a40": (None, _torch_mm("a40")),
    "l4": (None, _torch_mm("l4")),
    "a100_40gb_sxm": (
        None,
        {
            DType.FP16: ((8192, 8192, 8192, 257.62),),  # FlagPerf mm FP16_README.md
            DType.BF16: ((8192, 8192, 8192, 265.19),),  # 2 x 8192^3 / 4146.18 us
        },
    ),
}


AZURE = (
    "Azure AI benchmarking guide (github.com/Azure/AI-benchmarking-guide),",
    "  published BabelStream Dot (hbm_fraction) and cuBLASLt GEMMs of >= 1 TFLOP with",
    "  random inputs (the power-limited clock); no validation dataset of opmodel",
)
# config -> the fitted_on text of its calibration file (quoted when written)
FITTED_ON: dict[str, tuple[str, ...]] = {
    "a100_80gb_sxm": AZURE,
    "h100_sxm": AZURE,
    "h200_sxm": AZURE,
    "gb200": (
        "Azure AI benchmarking guide (github.com/Azure/AI-benchmarking-guide), ND GB200 v6:",
        "  published cuBLASLt FP8 GEMMs of >= 1 TFLOP with random inputs (the FP8",
        "  power-limited clock); no stream figure is published; no validation dataset of opmodel",
    ),
    "h100_pcie": (
        "torch-performance-test-data issue #95 (github.com/zzc0721/torch-performance-test-data),",
        "  NVIDIA H100 PCIe: torch.mm FP16 and BF16 GEMMs of >= 1 TFLOP with random inputs, 30",
        "  timed calls (the power-limited clock); held out: its smaller, TF32 and FP32 GEMMs",
        "  and issue #112's H800 PCIe (scripts/compare_published_torch_mm.py)",
    ),
    "l4": (
        "torch-performance-test-data issue #120 (github.com/zzc0721/torch-performance-test-data),",
        "  NVIDIA L4: torch.mm FP16 and BF16 GEMMs of >= 1 TFLOP with random inputs, 30 timed",
        "  calls (the power-limited clock); held out: its smaller, TF32 and FP32 GEMMs",
        "  (scripts/compare_published_torch_mm.py)",
    ),
    "a100_40gb_sxm": (
        "BAAI FlagPerf (github.com/FlagOpen/FlagPerf), A100_40_SXM: torch.mm FP16 and BF16 of",
        "  8192^3 with random inputs, do_bench medians (the power-limited clock); held out:",
        "  its torch.bmm rows (scripts/compare_published_flagperf_gemm.py)",
    ),
    "a40": (
        "torch-performance-test-data issue #185 (github.com/zzc0721/torch-performance-test-data),",
        "  torch.mm FP16 and BF16 GEMMs of >= 1 TFLOP with random inputs, 30 timed calls",
        "  (the power-limited clock); hbm_fraction: the declared training split of",
        f"  opmodel.validation.hbm_split ({HBM_FRACTION_SPLITS['a40'].description}),",
        "  reported apart by validate-ops",
    ),
}
