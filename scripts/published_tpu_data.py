"""The published TPU GEMM times that ``compare_published_tpu.py`` checks and
``fit_published_tpu_sustained.py`` fits a TPU's sustained MXU share on.

Both sources time JAX bf16 matmuls of square matrices on TPU7x on the device, from
``jax.profiler`` traces (not the host dispatch around each call):

- ``helion``: Helion pull request #2632 (choijon5, 2026-05-29, "[autotune] rank TPU matmul
  candidates by true on-chip time"), "Measured (TPU v7, on-chip us, median of 5 seeds)":
  1024^3 in 5.61 us and 2048^3 in 22.88 us.
- ``ai-hypercomputer``: Google's AI-Hypercomputer/accelerator-microbenchmarks (Apache-2.0),
  Ironwood/Ironwood_Microbenchmarks_readme.md at commit 5b4dce3, "GEMM Results": throughput in
  TFLOP/s per device of ``gemm_multiple_run`` (config gemm_multiple_run_more.yaml: bf16 inputs,
  fp32 accumulation, bf16 output, 100 runs, each on fresh inputs put on the device before it,
  kernel time from the trace; Ironwood/src/benchmark_gemm.py, which also pins
  ``--xla_tpu_dvfs_p_state=7``) for m = n = k from 128 to 32,768. Time = 2 m n k / throughput.
  The benchmark replicates the GEMM over a mesh of all devices (``NO_SHARDING``), so every
  TensorCore of the VM runs it at once, both of each chip's, as in a sharded training step.
  The benchmark's own peak, 2,307 TFLOP/s fp8 "for single core(device)", halved for bf16, is
  the ``tpu7x`` config's 1,155.

A JAX device on TPU7x is one TensorCore (JAX's tpu_info.py: no megacore): config ``tpu7x``.
"""

from __future__ import annotations

CONFIG = "tpu7x"
SOURCES = ("helion", "ai-hypercomputer")
# Helion #2632: (M = N = K, on-chip microseconds) of JAX's bf16 matmul on TPU v7
HELION_TPU7X_US = ((1024, 5.61), (2048, 22.88))
# accelerator-microbenchmarks, Ironwood readme: (M = N = K, TFLOP/s per device), bf16
IRONWOOD_TPU7X_TFLOPS = (
    (128, 2.589961271),
    (256, 18.28645367),
    (512, 105.0783466),
    (1024, 349.7270639),
    (2048, 679.284728),
    (4096, 892.9445127),
    (16384, 950.1286983),
    (32768, 956.3824592),
)
# the declared training split of the sustained MXU share: GEMMs of at least this many FLOP
# (16384^3 and 32768^3, 8.8 and 70 TFLOP, 9 and 74 ms), long enough to hold whatever clock and
# power state the chip settles in; every other row is held out
TRAINING_MIN_FLOP = 1e12


def published() -> list[tuple[str, int, float]]:
    """Every published row as (source, M = N = K, seconds)."""
    helion = [("helion", size, us * 1e-6) for size, us in HELION_TPU7X_US]
    ironwood = [
        ("ai-hypercomputer", size, 2 * size**3 / (tflops * 1e12))
        for size, tflops in IRONWOOD_TPU7X_TFLOPS
    ]
    return helion + ironwood


def is_training(size: int) -> bool:
    """Whether the square GEMM of side ``size`` is in the declared training split."""
    return 2 * size**3 >= TRAINING_MIN_FLOP
