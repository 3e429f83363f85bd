"""Traffic per level and energy of one or more streaming kernels that make up an op (the
forward's one kernel in :mod:`.streaming_op`, a backward pass's two in :mod:`.row_backward_op`).

DRAM: what the kernels read, and what they write plus another kernel's dirty lines they write
back now; L2: what they read, and ``l2_write_bytes``. Energy: the roofline's arithmetic energy,
each level's bytes x J/byte, static power over the kernels' summed latency.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from opmodel.core.frozen_dict import FrozenDict
from opmodel.core.op import LocalOp
from opmodel.core.profile import EnergyBreakdown, LevelTraffic, OpProfile
from opmodel.formulas.energy import event_energy_j
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.shared.level_energy import level_energy_j
from opmodel.models.shared.roofline_estimate import RooflineSetup
from opmodel.models.streaming.evaluate import StreamingEvaluation

__all__ = ["kernels_cost", "pair_cost", "streaming_cost", "streaming_profile"]


def streaming_cost(
    base: RooflineSetup,
    hardware: HardwareSpec,
    kernels: Sequence[StreamingEvaluation],
    l2_write_bytes: int,
    counts: Sequence[int] | None = None,
) -> tuple[Mapping[str, LevelTraffic], EnergyBreakdown]:
    """(traffic per level, energy) of ``kernels`` together (module docstring); ``counts``:
    how many times each runs (once each without it)."""
    read = written = l2_read = latency = 0.0
    for i, e in enumerate(kernels):  # one pass (a hot path: every fresh streaming op)
        n = 1 if counts is None else counts[i]
        read += n * e.dram_read_bytes
        written += n * (e.dram_write_bytes + e.dirty_write_back_bytes)
        l2_read += n * e.l2_read_bytes
        latency += n * e.latency_s
    traffic: Mapping[str, LevelTraffic] = FrozenDict(
        {
            "hbm": LevelTraffic(read_bytes=math.ceil(read), write_bytes=math.ceil(written)),
            "l2": LevelTraffic(read_bytes=math.ceil(l2_read), write_bytes=l2_write_bytes),
        }
    )
    energy = EnergyBreakdown.make(
        tensor_j=event_energy_j(base.tensor_flops, base.tensor_j_per_flop),
        vector_j=event_energy_j(base.vector_flops, base.vector_j_per_flop),
        memory_j=level_energy_j(traffic, hardware),
        static_j=hardware.power.busy_w * latency,
    )
    return traffic, energy


def pair_cost(
    base: RooflineSetup,
    hardware: HardwareSpec,
    first: StreamingEvaluation,
    second: StreamingEvaluation | None,
    l2_write_bytes: int,
) -> tuple[float, Mapping[str, LevelTraffic], EnergyBreakdown]:
    """(summed latency, traffic, energy) of an op's one or two kernels run one after the other
    (a row op's backward pass, a cross-entropy loss)."""
    kernels = (first,) if second is None else (first, second)
    return kernels_cost(base, hardware, kernels, l2_write_bytes)


def kernels_cost(
    base: RooflineSetup,
    hardware: HardwareSpec,
    kernels: Sequence[StreamingEvaluation],
    l2_write_bytes: int,
) -> tuple[float, Mapping[str, LevelTraffic], EnergyBreakdown]:
    """(summed latency, traffic, energy) of an op's kernels run one after the other."""
    traffic, energy = streaming_cost(base, hardware, tuple(kernels), l2_write_bytes)
    return sum(e.latency_s for e in kernels), traffic, energy


def streaming_profile(
    op: LocalOp,
    base: RooflineSetup,
    cost: tuple[float, Mapping[str, LevelTraffic], EnergyBreakdown],
    implementation: str,
    diagnostics: object,
) -> OpProfile:
    """The profile of ``op``'s streaming kernels: ``cost`` is their (latency, traffic, energy),
    FLOPs and engine the roofline's, ``implementation`` after ``effective_roofline/streaming/``."""
    latency, traffic, energy = cost
    return OpProfile.make(
        latency_s=latency,
        flops=base.tensor_flops + base.vector_flops,
        engine=base.engine,
        footprint=op.footprint,
        traffic=traffic,
        energy=energy,
        implementation=f"effective_roofline/streaming/{implementation}",
        diagnostics=diagnostics,
    )
