"""Block-scaled FP4 GEMMs on Blackwell against the published timings found, with the same
tables' BF16 and FP8 GEMMs as the control.

Usage: python scripts/compare_published_fp4.py

Sources (nothing here is fitted; every number is a model prediction against a published one):

- vLLM pull request #20578 (mgoin, 2025-07-07, "[Bench] Add NVFP4 GEMM benchmark script",
  repeated as the "Before" table of #20646): ``benchmarks/kernels/bench_nvfp4_gemm.py`` on
  Llama-3.1-8B's fused QKV projection, N = 6144, K = 4096, M = 1-16384: TFLOP/s of
  ``torch.nn.functional.linear`` in bf16 (cuBLAS) and of vLLM's CUTLASS NVFP4 GEMM on
  pre-quantised activations (``nvfp4-noquant``, bf16 output), each the median of
  ``triton.testing.do_bench_cudagraph`` (CUDA-graph replays, back to back: what fits in L2
  stays there). vLLM pull request #18778 (mgoin, "[Perf] Tunings for SM100 FP8 CUTLASS
  kernel"), its FP8 table for the same shape (``fp8-tensor-w-tensor-a-noquant``, M = 1-1024;
  the rest of the table is not in the stored copy). Both need compute capability 10.0 and
  do not name the board: the script prints the b200 and the gb200 configs.
- torchao pull request #2427 (drisspg, 2025-06-23, "add-to-benchmarks"),
  ``benchmarks/float8/bench_matmul.py --recipe nvfp4`` on an "NVIDIA B200": square GEMMs of
  1024-8192 in bf16 (``nn.Linear``) and NVFP4 (``torch._scaled_mm``, cuBLASLt, bf16 output),
  each the profiler's device time of the op's kernels averaged over 5 calls after one warm-up
  (``get_gpu_kernel_gemm_time_s``: kernel time, the convention of the GEMM overhead fit). Its
  four NVFP4 GEMMs under 0.1 TFLOP are the training rows of the FP4 kernels' extra fixed
  overhead (``scripts/fit_fp4_overhead.py``, ``configs/calibrations/gemm_fp4_overhead.yaml``);
  every other row here is held out, its bf16 column included.
- Microsoft's Azure AI benchmarking guide, ND GB200 v6 (Azure_Results/ND_GB200_v6_results.md,
  commit 2a370be6de9586d365feed77e014a73f25198f4d; "NVIDIA GB200 185GB", CUDA 12.8): "GEMM
  CuBLASLt (FP4)", superbenchmark's ``cublaslt_gemm -t fp4e2m1`` after 10,000 warm-up
  iterations, random inputs, timed with CUDA events over back-to-back calls (the events'
  scope adds the launches' front-end work, a microsecond or so on a small GEMM); cuBLASLt's
  FP4 GEMM is NVFP4 (E2M1 with E4M3 scales per 16), written here with a bf16 output.
- Helion pull requests #3046 (2026-07-14) and #3278 (2026-08-05, yushangdi), "GPU: NVIDIA
  B200": vLLM's CUTLASS NVFP4 GEMM (``cutlass`` column, ``fp4in`` rows: NVFP4 activations
  and weights) at M = 1 on projection shapes, in microseconds, cold L2 and CUDA graphs (#3202
  describes the runner: "B200, cold-L2 CUDA-graph benchmark"). The two runs of 8192 x 28672
  differ by 2.1x (59.4 and 124.9 us); both are kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from ratio_summary import GemmTiming, print_ratio_groups, timing_columns

from opmodel import ops
from opmodel.hardware import load_hardware
from opmodel.models import get_model

# (M, TFLOP/s) at N = 6144, K = 4096: vLLM #20578 (bf16, nvfp4-noquant), #18778 (fp8 noquant)
VLLM_N, VLLM_K = 6144, 4096
VLLM_TFLOPS = {
    "bf16": (
        (1, 5.924172), (16, 94.808087), (64, 402.453176), (128, 729.098503),
        (256, 1127.022999), (512, 1284.375329), (1024, 1325.576211), (2048, 1354.907564),
        (4096, 1365.255495), (8192, 1420.966950), (16384, 1360.143047),
    ),
    "nvfp4": (
        (1, 4.439497), (16, 71.160187), (64, 281.971021), (128, 549.526976),
        (256, 1102.033286), (512, 2187.995534), (1024, 2894.987191), (2048, 3411.463557),
        (4096, 3645.594842), (8192, 3778.760919), (16384, 3904.329097),
    ),
    "fp8_e4m3": (
        (1, 8.450960), (16, 137.105099), (64, 533.221407), (128, 905.743648),
        (256, 1462.903418), (512, 1759.884804), (1024, 2207.502274),
    ),
}  # fmt: skip
# (M, N, K, TFLOP/s) of cuBLASLt's NVFP4 GEMM on Azure's ND GB200 v6
AZURE_GB200_FP4_TFLOPS = (
    (1024, 1024, 1024, 287.2), (2048, 2048, 2048, 1677.7), (4096, 4096, 4096, 5177.3),
    (8192, 8192, 8192, 7535.6), (16384, 16384, 16384, 7627.6), (32768, 32768, 32768, 7487.2),
    (1024, 2145, 1024, 549.0), (802816, 192, 768, 2216.7),
)  # fmt: skip
# (M = N = K, bf16 seconds, NVFP4 seconds) on a B200: torchao #2427
TORCHAO_B200_S = (
    (1024, 5.08e-6, 5.87e-6), (1536, 7.87e-6, 6.73e-6), (2048, 1.52e-5, 1.02e-5),
    (3072, 3.84e-5, 1.65e-5), (4096, 9.74e-5, 3.08e-5), (6144, 3.19e-4, 8.44e-5),
    (8192, 7.74e-4, 2.05e-4),
)  # fmt: skip
TRAINING_FLOPS = 1e11  # torchao's NVFP4 rows under 0.1 TFLOP train the FP4 overhead


def training_rows() -> list[tuple[int, float]]:
    """torchao's B200 NVFP4 GEMMs under 0.1 TFLOP, the FP4 overhead's training rows: (size of
    the square GEMM, seconds)."""
    return [(n, fp4) for n, _, fp4 in TORCHAO_B200_S if _trains(n)]


def _trains(size: int) -> bool:
    """Whether torchao's square NVFP4 GEMM of ``size`` is a training row (under 0.1 TFLOP)."""
    return 2 * size**3 < TRAINING_FLOPS


# (N, K, microseconds) of vLLM's CUTLASS NVFP4 GEMM at M = 1 on a B200: helion #3046, #3278
HELION_B200_US: dict[str, tuple[tuple[int, int, float], ...]] = {
    "helion #3046": (
        (4096, 4096, 9.22), (6144, 4096, 10.72), (28672, 4096, 23.54),
        (8192, 8192, 21.27), (10240, 8192, 21.08), (8192, 28672, 59.40),
    ),
    "helion #3278": (
        (4096, 4096, 9.01), (6144, 4096, 10.25), (28672, 4096, 25.43),
        (4096, 14336, 19.76), (5120, 5120, 11.19), (15360, 5120, 17.40),
        (8192, 8192, 20.71), (10240, 8192, 20.25), (8192, 28672, 124.94),
    ),
}  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class Row(GemmTiming):
    """One published GEMM time and the model's on a config."""

    source: str
    config: str
    dtype: str


def _predict(
    config: str, dtype: str, mnk: tuple[int, int, int], model: str = "effective_roofline"
) -> tuple[float, str]:
    """Latency and kernel of ``y = x @ W^T`` (W ``[n, k]``) with a bf16 output."""
    m, n, k = mnk
    op = ops.gemm(m, n, k, dtype, out_dtype="bf16", transpose_b=True)
    profile = get_model(model).predict(op, load_hardware(config))
    return profile.latency_s, profile.implementation.rpartition("/")[2]


def _on(where: tuple[str, str, str], times: tuple[int, int, int, float, float, str]) -> Row:
    """A row from where its time comes from (source, config, dtype) and its timing fields."""
    source, config, dtype = where
    return Row(*times, source=source, config=config, dtype=dtype)


def compare() -> list[Row]:
    """Every published row against the model: torchao's on b200 (its NVFP4 training rows as
    source ``torchao (training)``), vLLM's on b200 and gb200, Azure's on gb200, Helion's on
    b200."""
    rows = []
    for config in ("b200", "gb200"):
        for dtype, points in VLLM_TFLOPS.items():
            for m, tflops in points:
                measured = 2 * m * VLLM_N * VLLM_K / (tflops * 1e12)
                model, kernel = _predict(config, dtype, (m, VLLM_N, VLLM_K))
                times = (m, VLLM_N, VLLM_K, measured, model, kernel)
                rows.append(_on(("vllm", config, dtype), times))
    for size, bf16_s, fp4_s in TORCHAO_B200_S:
        model, kernel = _predict("b200", "bf16", (size, size, size))
        rows.append(_on(("torchao", "b200", "bf16"), (size, size, size, bf16_s, model, kernel)))
        source = "torchao (training)" if _trains(size) else "torchao"
        model, kernel = _predict("b200", "nvfp4", (size, size, size))
        rows.append(_on((source, "b200", "nvfp4"), (size, size, size, fp4_s, model, kernel)))
    for m, n, k, tflops in AZURE_GB200_FP4_TFLOPS:
        source = "azure"
        model, kernel = _predict("gb200", "nvfp4", (m, n, k))
        measured = 2 * m * n * k / (tflops * 1e12)
        rows.append(_on((source, "gb200", "nvfp4"), (m, n, k, measured, model, kernel)))
    for source, shapes in HELION_B200_US.items():
        for n, k, micros in shapes:
            model, kernel = _predict("b200", "nvfp4", (1, n, k))
            rows.append(_on((source, "b200", "nvfp4"), (1, n, k, micros * 1e-6, model, kernel)))
    return rows


def groups(rows: list[Row]) -> dict[str, list[Row]]:
    """Rows by ``source config dtype`` and, for vLLM's, by M below and from 512."""
    found: dict[str, list[Row]] = {}
    for row in rows:
        source = "helion (b200, M = 1)" if row.source.startswith("helion") else row.source
        plain = row.source in ("vllm", "torchao", "azure")
        key = f"{source} {row.config} {row.dtype}" if plain else source
        found.setdefault(key, []).append(row)
        if row.source == "vllm":
            size = "M >= 512" if row.m >= 512 else "M < 512"
            found.setdefault(f"{key} {size}", []).append(row)
    return found


def main() -> int:
    rows = compare()
    print("source            config dtype        M      N      K  measured us   model us  ratio")
    for r in rows:
        print(
            f"{r.source:<17} {r.config:<6} {r.dtype:<9} {r.m:>6} {r.n:>6} {r.k:>6}"
            + timing_columns(r)
        )
    print_ratio_groups({k: [r.ratio for r in v] for k, v in groups(rows).items()}, 38)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
