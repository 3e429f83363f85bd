"""The structure of a streaming kernel: how it walks its data (CTAs, loads, passes,
reductions), the value the kernel builders of each implementation return
(:mod:`~opmodel.models.streaming.kernels`, :mod:`~opmodel.models.streaming.aten_rows`,
:mod:`~opmodel.models.streaming.gather`) and :mod:`~opmodel.models.streaming.evaluate` prices."""

from __future__ import annotations

from opmodel.core.enums import OpKind
from opmodel.core.values import FastValue, value_type

__all__ = ["ROW_REDUCTIONS", "VECTOR_BYTES", "StreamKernel", "held_row_registers"]

VECTOR_BYTES = 16  # LDG.128: the widest global load per thread
# block-wide reductions per row: rmsnorm's sum of squares; layernorm's mean and variance;
# softmax's max and sum
ROW_REDUCTIONS = {OpKind.RMSNORM: 1, OpKind.LAYERNORM: 2, OpKind.SOFTMAX: 2}


def held_row_registers(elements_per_thread: int) -> int:
    """Registers per thread of a Triton program that holds its row in registers (Liger's fused
    rows and RoPE): an estimate, one fp32 register per element held plus ~32 for addressing and
    state, at most the 255 a thread may have."""
    return min(255, 32 + elements_per_thread)


@value_type
class StreamKernel(FastValue):
    """How one streaming kernel walks its data.

    ``elements_per_cta``: elements (rows x length for row ops) one CTA covers.
    ``serial_loads``: loads one after another per pass (each waits for the previous); when 1,
    all loads of a pass are in flight together. ``loads_in_flight``: how many of those serial
    loads a thread keeps in flight on average (``serial_loads / loads_in_flight`` round trips
    per pass; 1 for every kernel but ATen's warp softmax). ``global_passes``: walks over the
    input; passes after the first re-read data the CTA has just read (an L2 hit while the
    wave's rows fit in L2). ``reductions``: block-wide reductions per row. ``name``: the kernel
    the structure stands for, as its library names it. ``serial_arithmetic``: the
    CTA's arithmetic follows its loads instead of overlapping them, so its chain includes its
    own arithmetic (:mod:`~opmodel.models.streaming.evaluate`): barriers between the phases
    (ATen's register and block softmax), or a loop whose next load waits for the previous
    iteration's arithmetic (ATen's layer norm). ``lockstep``: the CTAs that share an SM start
    together and run the same loop, so their serial arithmetic coincides and each CTA gets
    only its share of the SM's issue slots (vLLM's RMSNorm: two 1024-thread CTAs that fill the
    SM); without it a CTA's serial arithmetic issues at the whole SM's rate, its neighbours'
    arithmetic overlapping its loads. ``max_resident_ctas_per_sm``: a cap on
    resident CTAs per SM from a resource the structure does not price (0: none), such as a
    benchmark's shared-memory allocation that admits two CTAs per SM. ``l2_serial_loads``:
    dependent loads per pass, besides the ``serial_loads``, of data that sits in L2 (the index
    an ``index_select`` reads before the row it names, :mod:`~opmodel.models.streaming.gather`),
    each an L2 round trip in the chain. ``stalls_in_issue_cost``: the kernel's issue cost is a
    cost per element of the whole SM that already holds the stalls of its dependent
    instructions (``index_select``'s calibrated cost), so its serial arithmetic runs at the SM's
    issue rate even with one warp per SMSP, without the ``L_fma / k`` factor of a lone warp
    (:mod:`~opmodel.models.streaming.evaluate`).
    """

    implementation: str
    ctas: int
    threads_per_cta: int
    registers_per_thread: int
    elements_per_cta: int
    serial_loads: int
    global_passes: int
    reductions: int
    loads_in_flight: float = 1.0
    name: str = ""  # the kernel this structure stands for (diagnostics)
    serial_arithmetic: bool = False
    max_resident_ctas_per_sm: int = 0
    lockstep: bool = False
    l2_serial_loads: int = 0
    stalls_in_issue_cost: bool = False

    @property
    def round_trips_per_pass(self) -> float:
        """``serial_loads / loads_in_flight``: the memory round trips one pass waits for."""
        return self.serial_loads / self.loads_in_flight
