"""Marin's JAX microbenchmarks as the model runs them (marin-community/marin,
.agents/reports/gpu-hardware-target-report.md, 2026-07-07, measured with its
scripts/bench/gpu_microbench.py): ``jax.jit(x @ y)`` of square matrices, 3 warm-up and 10
synchronised calls timed by wall clock, and an fp32 stream ``x * 1.0001 + 1`` (one read, one
write). Shared by scripts/compare_published_jax_h100.py and compare_published_b300.py."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from opmodel import OpProfile, ops
from opmodel.hardware import HardwareSpec
from opmodel.models import get_model


def square_gemms(
    hardware: HardwareSpec, published: Sequence[tuple[int, str, float]]
) -> Iterator[tuple[int, str, float, OpProfile]]:
    """``(size, dtype, published seconds, effective_roofline profile)`` of each published
    ``(M = N = K, input dtype, TFLOP/s)``."""
    model = get_model("effective_roofline")
    for size, dtype, tflops in published:
        profile = model.predict(ops.gemm(size, size, size, dtype), hardware)
        yield size, dtype, 2 * size**3 / (tflops * 1e12), profile


def stream(hardware: HardwareSpec, mib: int, tb_per_s: float) -> tuple[float, OpProfile]:
    """(published seconds, profile) of the fp32 stream over ``mib`` MiB at ``tb_per_s`` of
    bytes read and written, as a vectorised elementwise kernel."""
    elements = mib * 2**20 // 4
    op = ops.elementwise("scalar_mul", (elements,), "fp32", implementation="fused")
    profile = get_model("effective_roofline").predict(op, hardware)
    return 2 * elements * 4 / (tb_per_s * 1e12), profile
