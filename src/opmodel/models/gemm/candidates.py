"""Step 1 of automatic GEMM kernel selection (:mod:`opmodel.models.gemm.selection`): the legal
catalogue kernels for a problem's dtypes on a GPU, each specialised to the dtype's MMA shape,
with its setup and the constants the pre-rank needs, built once per hardware spec and dtypes."""

from __future__ import annotations

from dataclasses import dataclass

from opmodel.core.errors import UnsupportedOpError
from opmodel.hardware.kernel_catalogue import KernelTemplate, catalogue_architectures, catalogue_for
from opmodel.hardware.spec import HardwareSpec, SmSpec
from opmodel.models.gemm.evaluate import KernelSetup, kernel_setup
from opmodel.models.gemm.kernel import (
    GemmKernel,
    Instruction,
    default_registers_per_thread,
    mma_shape_for,
    static_kernel_problems,
)
from opmodel.models.gemm.problem import GemmProblem

__all__ = ["Candidate", "candidates_for", "specialise"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A legal kernel for one dtype on one GPU, with its pre-rank constants."""

    kernel: GemmKernel
    setup: KernelSetup
    ctas_per_wave: int
    cta_stage_cycles: float  # SM time of one CTA-stage at full residency
    skinny_only: bool
    min_mn_if_mn_major: int  # the family's smallest min(M, N) with an M- or N-major operand
    # the kernel's (cta_tile_m, cta_tile_n, cta_tile_k, split_k, cluster_m, cluster_n), read
    # once per candidate by the pre-rank's loop
    shape: tuple[int, int, int, int, int, int]


def specialise(t: KernelTemplate, sm: SmSpec, problem: GemmProblem) -> GemmKernel:
    """The catalogue template ``t`` as a kernel for ``problem``'s compute dtype on ``sm``."""
    simt = t.instruction is Instruction.SIMT
    mma = (1, 1, 1) if simt else mma_shape_for(sm, problem.compute_dtype)
    return GemmKernel(
        name=t.name,
        instruction=t.instruction,
        cta_tile_m=t.cta[0],
        cta_tile_n=t.cta[1],
        cta_tile_k=t.cta[2],
        warp_tile_m=t.warp[0],
        warp_tile_n=t.warp[1],
        warp_tile_k=t.warp[2],
        mma_m=mma[0],
        mma_n=mma[1],
        mma_k=mma[2],
        pipeline_stages=t.stages,
        warps_per_cta=t.warps_per_cta,
        registers_per_thread=t.registers_per_thread
        or default_registers_per_thread(t.warp[0], t.warp[1], sm),
        split_k=t.split_k,
        raster_swizzle=8,
        resident_ctas_per_sm=None,
        producer_warps=t.producer_warps,
        cluster_m=t.cluster[0],
        cluster_n=t.cluster[1],
    )


def _templates(hardware: HardwareSpec) -> tuple[KernelTemplate, ...]:
    """The architecture's catalogue; none is an :class:`UnsupportedOpError`."""
    arch = hardware.architecture or ""
    templates = catalogue_for(arch)
    if templates is None:
        known = ", ".join(catalogue_architectures())
        msg = (
            f"hardware '{hardware.name}': no GEMM kernel catalogue for architecture "
            f"'{arch or None}' (catalogues: {known}); give the kernel attrs "
            "(cta_tile_m, cta_tile_n, cta_tile_k, ...) explicitly"
        )
        raise UnsupportedOpError(msg)
    return templates


def _build_candidates(hardware: HardwareSpec, problem: GemmProblem) -> tuple[Candidate, ...]:
    """Every catalogue kernel of the architecture that runs the compute dtype on the right
    engine and fits the SM, with its setup and pre-rank constants."""
    sm = hardware.compute.sm
    assert sm is not None
    dtype = problem.compute_dtype
    on_tensor = hardware.compute.tensor_peak(dtype) is not None
    out = []
    for template in _templates(hardware):
        simt = template.instruction is Instruction.SIMT
        if not template.runs(dtype) or simt == on_tensor:
            continue
        kernel = specialise(template, sm, problem)
        if static_kernel_problems(kernel, problem, sm):
            continue
        setup = kernel_setup(kernel, problem, hardware)
        resident = setup.occupancy.resident_ctas_per_sm
        stage = setup.full_local
        out.append(
            Candidate(
                kernel=kernel,
                setup=setup,
                ctas_per_wave=sm.sm_count * resident,
                cta_stage_cycles=max(stage.tensor_cycles, stage.smem_cycles) / resident,
                skinny_only=template.skinny_only,
                min_mn_if_mn_major=template.min_mn_if_mn_major,
                shape=(
                    kernel.cta_tile_m,
                    kernel.cta_tile_n,
                    kernel.cta_tile_k,
                    kernel.split_k,
                    kernel.cluster_m,
                    kernel.cluster_n,
                ),
            )
        )
    return tuple(out)


def candidates_for(hardware: HardwareSpec, problem: GemmProblem) -> tuple[Candidate, ...]:
    """The legal catalogue kernels for ``problem``'s dtypes on ``hardware``, memoised per
    spec and dtypes (sizes are checked by the pre-rank)."""
    key = (
        "gemm.selection.candidates",
        problem.dtypes,
    )
    cached = hardware.derived_cache.get(key)
    if cached is None:
        cached = hardware.derived_cache[key] = _build_candidates(hardware, problem)
    return cached
