"""TPU GEMMs against the published on-chip times found: the first TPU kernel times this
project checks (every shipped TPU config is otherwise built from datasheet figures only).

Usage: python scripts/compare_published_tpu.py

Source (nothing here is fitted): Helion pull request #2632 (choijon5, 2026-05-29, "[autotune]
rank TPU matmul candidates by true on-chip time"), "Measured (TPU v7, on-chip us, median of 5
seeds)": JAX's bf16 matmul of square matrices, 1024^3 in 5.61 us and 2048^3 in 22.88 us, the
kernel's time read from jax.profiler traces (not the ~125 us of dispatch around each call the
pull request describes). A JAX device on TPU7x is one TensorCore (``tpu7x``; JAX's
tpu_info.py: no megacore), so the rows run on that config.
"""

from __future__ import annotations

from dataclasses import dataclass

from ratio_summary import GemmTiming, print_timing_report

from opmodel import ops
from opmodel.hardware import load_hardware
from opmodel.models import get_model

CONFIG = "tpu7x"
# Helion #2632: (M = N = K, on-chip microseconds) of JAX's bf16 matmul on TPU v7
HELION_TPU7X_US = ((1024, 5.61), (2048, 22.88))
MODELS = ("effective_roofline", "roofline")


@dataclass(frozen=True, slots=True, kw_only=True)
class Row(GemmTiming):
    """One published TPU GEMM and one model's time for it."""

    model: str


def compare() -> list[Row]:
    """Every published row against each model on the ``tpu7x`` config."""
    hardware = load_hardware(CONFIG)
    rows = []
    for size, microseconds in HELION_TPU7X_US:
        for name in MODELS:
            profile = get_model(name).predict(ops.gemm(size, size, size), hardware)
            kernel = profile.implementation.rpartition("/")[2]
            rows.append(Row(size, size, size, microseconds * 1e-6, profile.latency_s, kernel,
                            model=name))  # fmt: skip
    return rows


def main() -> int:
    rows = compare()
    heading = (
        f"Helion #2632's TPU v7 bf16 matmuls (JAX, on-chip) against the models on {CONFIG}",
        "model                   M      N      K  measured us   model us  ratio",
    )
    labelled = [(f"{r.model:<18} {r.m:>6} {r.n:>6} {r.k:>6}", r) for r in rows]
    by_model = {name: [r.ratio for r in rows if r.model == name] for name in MODELS}
    print_timing_report(heading, labelled, by_model, 20)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
