"""H100 GEMMs and an HBM stream as JAX runs them, against the published times of Marin's
hardware report.

Usage: python scripts/compare_published_jax_h100.py

Source: marin-community/marin, .agents/reports/gpu-hardware-target-report.md (2026-07-07, commit
9f18983), "Compute and HBM Measurements", H100 rows, measured with its
scripts/bench/gpu_microbench.py (Apache-2.0): ``jax.jit(x @ y)`` of square matrices drawn in
bf16 and cast to the input dtype, 3 warm-up and 10 timed calls, each synchronised
(``block_until_ready``), wall clock over the 10; and an fp32 stream ``x * 1.0001 + 1`` over
2,048 MiB (one read, one write). Config ``h100_sxm`` (the report's "H100 SXM"; 80 GB, 700 W).
Held out, nothing fitted. The report's JAX collectives are left out: each timed call also
fills its buffer (``jnp.ones(...) * scale``) and carries pmap's dispatch (0.4-0.7 ms at the
report's fitted intercepts), so they time more than the collective.
"""

from __future__ import annotations

from dataclasses import dataclass

from marin_jax import square_gemms, stream
from ratio_summary import Timed, ratio_summary

from opmodel.hardware import load_hardware

CONFIG = "h100_sxm"
# (M = N = K, input dtype, published TFLOP/s)
GEMMS = ((8192, "bf16", 753.3), (8192, "fp8", 1300.3), (16384, "bf16", 700.6),
         (16384, "fp8", 1452.7))  # fmt: skip
STREAM_MIB, STREAM_TB_PER_S = 2048, 2.85  # fp32 x * a + b over 2,048 MiB, bytes read + written


@dataclass(frozen=True, slots=True, kw_only=True)
class Row(Timed):
    """One published time and the model's."""

    label: str
    implementation: str


def compare() -> list[Row]:
    """The four GEMMs and the stream under ``effective_roofline``."""
    hardware = load_hardware(CONFIG)
    rows = []
    for size, dtype, seconds, profile in square_gemms(hardware, GEMMS):
        label = f"gemm {size}^3 {dtype}"
        rows.append(Row(label=label, measured_s=seconds, model_s=profile.latency_s,
                        implementation=profile.implementation))  # fmt: skip
    seconds, profile = stream(hardware, STREAM_MIB, STREAM_TB_PER_S)
    rows.append(Row(label=f"stream x*a+b {STREAM_MIB} MiB fp32", measured_s=seconds,
                    model_s=profile.latency_s, implementation=profile.implementation))  # fmt: skip
    return rows


def main() -> int:
    rows = compare()
    print(f"Marin's published JAX H100 figures against effective_roofline on {CONFIG}")
    print(f"{'op':<30} {'measured us':>11} {'model us':>9}  ratio  implementation")
    for r in rows:
        print(
            f"{r.label:<30} {r.measured_s * 1e6:>11.1f} {r.model_s * 1e6:>9.1f} "
            f"{r.ratio:>5.2f}x  {r.implementation.partition('/')[2]}"
        )
    count, mape, geomean = ratio_summary([r.ratio for r in rows if r.label.startswith("gemm")])
    print(f"\nGEMMs: {count} rows, MAPE {100 * mape:.1f} %, geomean {geomean:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
