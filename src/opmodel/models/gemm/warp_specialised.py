"""Warp-specialised GEMM kernels (CUTLASS 3 / cuBLAS persistent sm_90 and sm_100 kernels):
their producer warps load a wave's first stages while the consumers of the wave before store
their tiles, so a wave's prologue runs under the previous wave's epilogue, as far as the DRAM
bytes both move allow (docs/models/effective_roofline.md)."""

from __future__ import annotations

from opmodel.models.gemm.cta_work import CtaWork

__all__ = ["hidden_cycles", "overlap_dram_bytes"]


def overlap_dram_bytes(w: CtaWork, loading_ctas: int, storing_ctas: int) -> float:
    """DRAM bytes a wave's prologue (``loading_ctas`` CTAs loading their first window of
    stages) and the previous wave's epilogue (``storing_ctas`` CTAs storing their tiles) move
    together; :func:`hidden_cycles` bounds their overlap by them."""
    window = min(w.window_stages, w.k_iterations)
    return loading_ctas * window * w.dram_bytes + storing_ctas * w.epilogue_dram_bytes


def hidden_cycles(prologue: float, epilogue: float, dram_bytes: float, dram_peak: float) -> float:
    """Cycles of a wave's prologue that run under the previous wave's epilogue in a
    warp-specialised kernel: the shorter of the two, but never so many that the DRAM bytes both
    move (:func:`overlap_dram_bytes`) would pass faster than the DRAM peak,
    ``prologue + epilogue - hidden >= dram_bytes / dram_peak``. Another kernel's dirty lines
    written back meanwhile are left out: the controller queues them behind the loads (they
    lengthen only a DRAM-bound wave, as in :func:`wave_numbers`)."""
    joint = dram_bytes / dram_peak if dram_peak > 0 else 0.0
    hidden = min(prologue, epilogue, prologue + epilogue - joint)
    return hidden if hidden > 0 else 0.0
