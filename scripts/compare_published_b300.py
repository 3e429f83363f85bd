"""The B300 config against published B300 timings: cuBLASLt GEMMs (CUDA events) and JAX runs.

Usage: python scripts/compare_published_b300.py

Sources, both held out (nothing is fitted on them; ``b300`` is built from datasheet figures and
the B200's structure, src/opmodel/configs/hardware/b300.yaml):

- Antoniomv7/gb300-microbench (BSD-3-Clause), results/new/gemm_comparison.csv (commit
  babfdc5): one NVIDIA B300 SXM6 AC (compute capability 10.3, driver 610.43.02, CUDA 13.1),
  cuBLASLt's first heuristic algorithm for five BF16 GEMMs with FP32 accumulation and an FP32
  output (``c_dtype Float32``), A k-major and B k-major (``transb`` T: B stored ``[n, k]``),
  beta 0, hot caches; each of three campaigns takes the median of ten timed launches (CUDA
  events around one kernel), and the file gives the three campaigns' median, used here.
- marin-community/marin, .agents/reports/gpu-hardware-target-report.md (2026-07-07), the
  "Blackwell proxy" rows: ``jax.jit(x @ y)`` of square matrices, 3 warm-up and 10 synchronised
  calls timed by wall clock, and an fp32 stream ``x * 1.0001 + 1`` over 2,048 MiB. The report
  does not name the GPU; its 275 GB of HBM and 1,100 W power limit are a B300's (a B200 has
  180 GB and 1,000 W), which is an inference. Each call's dispatch and synchronisation are in
  the time.

Printed per row: published and predicted microseconds, their ratio and the model's kernel,
then MAPE and geometric-mean ratio per source.
"""

from __future__ import annotations

from dataclasses import dataclass

from marin_jax import square_gemms, stream
from ratio_summary import GemmTiming, print_timing_report

from opmodel import ops
from opmodel.hardware import load_hardware
from opmodel.models import get_model

CONFIG = "b300"
SOURCES = ("cublaslt", "jax")
# (m, n, k, median kernel ms of cuBLASLt over the three campaigns), gemm_comparison.csv
CUBLASLT = ((4096, 4096, 4096, 0.078467), (8192, 8192, 8192, 0.522838),
            (16384, 512, 4096, 0.048054), (32768, 512, 4096, 0.091462),
            (512, 16384, 4096, 0.046237))  # fmt: skip
# (M = N = K, input dtype, published TFLOP/s), marin's "Compute and HBM Measurements"
JAX = ((8192, "bf16", 1578.0), (16384, "bf16", 1880.7), (8192, "fp8", 2771.7),
       (16384, "fp8", 3556.4))  # fmt: skip
STREAM_MIB, STREAM_TB_PER_S = 2048, 6.42  # fp32 x * a + b, bytes read + written


@dataclass(frozen=True, slots=True)
class Row(GemmTiming):
    """One published GEMM time and the model's."""

    source: str
    dtype: str


def compare() -> list[Row]:
    """The five cuBLASLt GEMMs and marin's four JAX GEMMs under ``effective_roofline``."""
    model, hardware = get_model("effective_roofline"), load_hardware(CONFIG)
    rows = []
    for m, n, k, ms in CUBLASLT:
        op = ops.gemm(m, n, k, "bf16", out_dtype="fp32", transpose_b=True)
        profile = model.predict(op, hardware)
        rows.append(Row(m, n, k, ms * 1e-3, profile.latency_s, _kernel(profile.implementation),
                        "cublaslt", "bf16"))  # fmt: skip
    for size, dtype, seconds, profile in square_gemms(hardware, JAX):
        rows.append(Row(size, size, size, seconds, profile.latency_s,
                        _kernel(profile.implementation), "jax", dtype))  # fmt: skip
    return rows


def stream_ratio() -> tuple[float, float]:
    """(published, predicted) seconds of marin's fp32 stream over ``STREAM_MIB``."""
    published, profile = stream(load_hardware(CONFIG), STREAM_MIB, STREAM_TB_PER_S)
    return published, profile.latency_s


def _kernel(implementation: str) -> str:
    return implementation.partition("/")[2]


def main() -> int:
    rows = compare()
    heading = (
        f"Published B300 GEMM times against effective_roofline on {CONFIG}",
        f"{'source':<9} {'m':>6} {'n':>6} {'k':>6} dtype  measured us   model us  ratio  kernel",
    )
    labelled = [(f"{r.source:<9} {r.m:>6} {r.n:>6} {r.k:>6} {r.dtype:<5}", r) for r in rows]
    groups = {source: [r.ratio for r in rows if r.source == source] for source in SOURCES}
    print_timing_report(heading, labelled, groups, 9)
    published, predicted = stream_ratio()
    print(f"jax stream x*a+b {STREAM_MIB} MiB fp32: {published * 1e6:.1f} us published, "
          f"{predicted * 1e6:.1f} us predicted, {predicted / published:.2f}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
