"""TPU GEMMs on systolic arrays (MXUs), in closed form, for ``effective_roofline``.

A weight-stationary MXU of ``R x C`` processing elements holds one ``R x C`` tile of B
(``K x N``) and streams LHS rows through it, one row per cycle at full rate (Jouppi et al.,
"In-Datacenter Performance Analysis of a Tensor Processing Unit", ISCA 2017, section 2; TPU v4
keeps the 128x128 weight-stationary design, Jouppi et al., ISCA 2023). With
``T = ceil(K / R) * ceil(N / C)`` weight tiles (per batch entry unless B is broadcast) over
``U`` MXUs (a grouped GEMM's ``M`` is its groups' mean of ``max(m_g, R)``: a weight tile
takes ``R`` cycles to load however few rows its group streams):

    T >= U:  passes = ceil(T / U), rows per pass = M
    T <  U:  one pass, rows split over s = min(floor(U / T), ceil(M / R)) MXUs per tile
    compute  = passes * max(rows_per_pass, R) * R * C / macs_per_cycle + R + C

(the next weight tile loads in ``R`` cycles while rows stream, so a pass is at least ``R``
cycles; ``R + C`` fills and drains the array once). ``macs_per_cycle`` comes from the
configured tensor peak, ``peak / (2 * U * clock)``, which is ``R * C`` when the config is
consistent. Operands are staged through VMEM in double-buffered blocks: a square output block
``b x b`` (``b`` in ``VMEM_BLOCK_SIDES``) with a K block of ``min(K, 512)`` that fits a
TensorCore's VMEM share; A is read from HBM once per column of blocks and B once per row of
blocks. The kernel is ``prologue + max(compute, memory) + epilogue + fixed`` where the
prologue loads the first block and the epilogue stores the last one, each at the
concurrency-limited HBM rate ``min(peak, block_bytes / latency)``. Of the fitting blocks the
compiler's tiling is the one with the least time (the larger on a tie): larger blocks read A
and B fewer times but expose a longer prologue and epilogue. A larger K only removes fitting
blocks, so the time never falls as the problem grows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from opmodel.core.enums import Engine
from opmodel.core.errors import UnsupportedOpError
from opmodel.core.frozen_dict import FrozenDict
from opmodel.core.op import LocalOp
from opmodel.core.profile import EnergyBreakdown, LevelTraffic, OpProfile
from opmodel.core.values import FastValue, value_type
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.gemm.concurrency import concurrency_limited_rate
from opmodel.models.gemm.problem import GemmProblem

__all__ = ["VMEM_BLOCK_SIDES", "SystolicDiagnostics", "predict_systolic_gemm"]

VMEM_BLOCK_SIDES = (2048, 1024, 512, 256, 128)  # candidate output block sides, largest first
VMEM_BLOCK_K = 512  # K extent of one staged block
ACCUMULATOR_BITS = 32  # output blocks accumulate in fp32 in VMEM


@value_type
class SystolicDiagnostics(FastValue):
    """Why ``effective_roofline`` gave its number for a TPU GEMM."""

    mxu_rows: int
    mxu_cols: int
    mxus: int
    weight_tiles: int
    rows_per_weight_tile: int
    row_split: int  # MXUs sharing one weight tile when there are fewer tiles than MXUs
    passes: int
    block_m: int
    block_n: int
    block_k: int
    mxu_efficiency: float  # useful over issued MACs (padding of K and N to the array)
    compute_cycles: float
    memory_cycles: float
    prologue_cycles: float
    epilogue_cycles: float
    fixed_overhead_cycles: int
    limiting: str  # "mxu" or "hbm"

    @property
    def total_cycles(self) -> float:
        """Prologue + max(compute, memory) + epilogue + fixed overhead."""
        body = max(self.compute_cycles, self.memory_cycles)
        return self.prologue_cycles + body + self.epilogue_cycles + self.fixed_overhead_cycles


def _block_candidates(
    problem: GemmProblem, rows: int, vmem_per_core: float
) -> list[tuple[int, int, int]]:
    """Every ``(bm, bn, bk)`` of :data:`VMEM_BLOCK_SIDES` whose double-buffered operand blocks
    and fp32 output block fit a core's VMEM share (the smallest when none does). A larger K
    makes ``bk`` larger, so a larger problem never gains a candidate."""
    a, b = problem.a_bits / 8, problem.b_bits / 8
    bk = min(-(-problem.k // 128) * 128, VMEM_BLOCK_K)
    fits = []
    for side in VMEM_BLOCK_SIDES:
        bm = min(side, -(-rows // 128) * 128)
        bn = min(side, -(-problem.n // 128) * 128)
        if 2 * (bm * bk * a + bk * bn * b) + bm * bn * ACCUMULATOR_BITS / 8 <= vmem_per_core:
            fits.append((bm, bn, bk))
    return fits or [(128, 128, bk)]


def _mxu_schedule(problem: GemmProblem, hardware: HardwareSpec) -> tuple[int, int, int, int]:
    """(weight tiles, rows per weight tile, row split, passes)."""
    mxu = hardware.compute.mxu
    assert mxu is not None
    units = mxu.tensor_cores * mxu.mxus_per_core
    weight_sets = 1 if problem.broadcast_b else problem.batch
    rows = problem.m * (problem.batch if problem.broadcast_b else 1)
    if problem.group_m:  # a group streams its own rows through its weight tiles, at least R
        rows = -(-sum(max(m, mxu.mxu_rows) for m in problem.group_m) // problem.batch)
    tiles = weight_sets * math.ceil(problem.k / mxu.mxu_rows) * math.ceil(problem.n / mxu.mxu_cols)
    if tiles >= units:
        return tiles, rows, 1, math.ceil(tiles / units)
    split = max(1, min(units // tiles, math.ceil(rows / mxu.mxu_rows)))
    return tiles, rows, split, 1


def _diagnostics(problem: GemmProblem, hardware: HardwareSpec, peak: float) -> SystolicDiagnostics:
    mxu, clock = hardware.compute.mxu, hardware.compute.clock_hz
    assert mxu is not None
    if "vmem" not in hardware.levels_by_name:
        msg = f"hardware '{hardware.name}' has no 'vmem' memory level, which TPU GEMMs need"
        raise UnsupportedOpError(msg)
    r, c, units = mxu.mxu_rows, mxu.mxu_cols, mxu.tensor_cores * mxu.mxus_per_core
    tiles, rows, split, passes = _mxu_schedule(problem, hardware)
    macs_per_cycle = peak * hardware.utilization.tensor_fraction / (2 * units * clock)
    per_pass = max(math.ceil(rows / split), r) * r * c / macs_per_cycle
    compute = passes * per_pass + r + c
    vmem = hardware.level("vmem").size_bytes / mxu.tensor_cores
    (bm, bn, bk), (memory, prologue, epilogue) = _tiling(problem, rows, hardware, compute, vmem)
    return SystolicDiagnostics.make(
        mxu_rows=r,
        mxu_cols=c,
        mxus=units,
        weight_tiles=tiles,
        rows_per_weight_tile=rows,
        row_split=split,
        passes=passes,
        block_m=bm,
        block_n=bn,
        block_k=bk,
        mxu_efficiency=problem.flops / (2 * tiles * r * c * rows),
        compute_cycles=compute,
        memory_cycles=memory,
        prologue_cycles=prologue,
        epilogue_cycles=epilogue,
        fixed_overhead_cycles=hardware.overhead.fixed_device_overhead_cycles,
        limiting="mxu" if compute >= memory else "hbm",
    )


def _tiling(
    problem: GemmProblem, rows: int, hardware: HardwareSpec, compute: float, vmem: float
) -> tuple[tuple[int, int, int], tuple[float, float, float]]:
    """The compiler's tiling: of the blocks that fit ``vmem`` bytes, the one with the least
    ``prologue + max(compute, memory) + epilogue`` (the larger on a tie), with its (memory,
    prologue, epilogue) cycles."""
    clock, hbm = hardware.compute.clock_hz, hardware.hbm
    rate = hbm.bandwidth_bytes_per_s * hardware.memory_fraction("hbm") / clock
    latency = hbm.latency_s * clock

    def phases(block: tuple[int, int, int]) -> tuple[float, float, float]:
        bm, bn, bk = block
        read, write = _hbm_bytes(problem, rows, bm, bn)
        first = bm * bk * problem.a_bits / 8 + bk * bn * problem.b_bits / 8
        last = bm * bn * problem.c_bits / 8
        return (
            (read + write) / rate,
            first / concurrency_limited_rate(rate, first, latency),
            last / concurrency_limited_rate(rate, last, latency),
        )

    timed = [(block, phases(block)) for block in _block_candidates(problem, rows, vmem)]
    return min(timed, key=lambda item: item[1][1] + max(compute, item[1][0]) + item[1][2])


def _hbm_bytes(problem: GemmProblem, rows: int, bm: int, bn: int) -> tuple[int, int]:
    """(read, write) HBM bytes: A once per column of output blocks, B once per row."""
    a_passes = math.ceil(problem.n / bn)
    b_passes = math.ceil(rows / bm)
    c_read = 0 if problem.beta_zero else problem.c_bytes
    return problem.a_bytes * a_passes + problem.b_bytes * b_passes + c_read, problem.c_bytes


def _traffic(problem: GemmProblem, d: SystolicDiagnostics) -> Mapping[str, LevelTraffic]:
    """HBM reads and writes of the chosen blocking, and the VMEM traffic that feeds the MXUs
    (A once per MXU-column tile of N, B once) and stages what HBM moves."""
    read, write = _hbm_bytes(problem, d.rows_per_weight_tile, d.block_m, d.block_n)
    vmem_read = problem.a_bytes * math.ceil(problem.n / d.mxu_cols) + problem.b_bytes
    return FrozenDict(
        {
            "hbm": LevelTraffic(read_bytes=read, write_bytes=write),
            "vmem": LevelTraffic(read_bytes=vmem_read, write_bytes=read + write),
        }
    )


def predict_systolic_gemm(op: LocalOp, hardware: HardwareSpec) -> OpProfile:
    """The profile of a GEMM op on a TPU (module docstring)."""
    problem = GemmProblem.from_op(op)
    compute = hardware.compute
    peak = compute.tensor_peak(problem.compute_dtype)
    if peak is None:
        msg = (
            f"hardware '{hardware.name}' has no tensor (MXU) peak for {problem.compute_dtype} "
            f"(tensor: {', '.join(d.value for d in compute.tensor_flops_per_s) or 'none'})"
        )
        raise UnsupportedOpError(msg)
    d = _diagnostics(problem, hardware, peak)
    latency = d.total_cycles / compute.clock_hz
    traffic = _traffic(problem, d)
    issued = round(problem.flops / d.mxu_efficiency)
    return OpProfile.make(
        latency_s=latency,
        flops=problem.flops,
        engine=Engine.TENSOR,
        footprint=op.footprint,
        traffic=traffic,
        energy=EnergyBreakdown.make(
            tensor_j=issued * compute.energy_per_flop(tensor=True, dtype=problem.compute_dtype),
            vector_j=0.0,
            memory_j=FrozenDict(
                {
                    name: moved.total_bytes * hardware.level(name).energy_j_per_byte
                    for name, moved in traffic.items()
                }
            ),
            static_j=hardware.power.busy_w * latency,
        ),
        implementation="effective_roofline/systolic",
        diagnostics=d,
    )
