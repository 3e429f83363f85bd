"""ATen's reduce kernel (``reduce_kernel`` in aten/src/ATen/native/cuda/Reduce.cuh):
``torch.sum``, ``mean``, ``max`` and ``min`` of a whole tensor, of each row, or over leading
axes.

``setReduceConfig`` picks the launch from the tensor's shape and the GPU, and this module
follows it in closed form. For ``outputs`` rows of ``length`` elements reduced over the
innermost axis (a whole-tensor reduction is one row):

- the block: ``dim0`` is the row (divided by the input vector width when the loads are
  vectorized), ``dim1`` the outputs; with ``p(d) = min(512, last power of two <= d)``,
  ``width = min(p(dim0), 32)``, ``height = min(p(dim1), 512 / width)``, then
  ``width = min(p(dim0), 512 / height)`` (``set_block_dimension``; 512 threads at most);
- the row is split over the block's ``width`` lanes; ``values = ceil(length / width)`` per
  thread. When ``values >= 16 height`` or ``values >= 256`` it is split over the block's
  ``height`` warps too (one output per CTA, a shared-memory reduction across warps), else
  each of the ``height`` rows of lanes takes its own output;
- a CTA per ``height`` outputs (or per output), ``grid``; when the warps split the row,
  ``values >= 256`` and ``grid <= target`` (``target = SMs x floor(threads per SM /
  block)``), the row is split over ``ctas = max(min(ceil(target / grid), ceil(values / 16)),
  ceil(values / 256))`` CTAs as well, which meet through a global buffer and a semaphore
  (the last CTA of a row sums the partials: one more reduction);
- each thread walks its ``values`` elements in steps of 4 (``vt0 = 4`` independent loads per
  step, or one 4-element vector: 16 bytes for fp32, 8 for a 16-bit dtype), each step one
  round trip: ``ceil(values / 4)`` serial loads. The loads are vectorized when the row is
  longer than 128 elements and ``vt0 >= input_vec_size``; PyTorch 2.14.1's cubins instantiate
  16-bit ``sum`` and ``mean`` with ``input_vec_size = 8`` (``ReduceOp<..., 4, 8>``), so those
  take four scalar loads per step instead, and every other case a 4-element vector.

A 2^30-element fp32 sum on an A100 (108 SMs, 2,048 threads each) is then 8,192 CTAs of 512
threads, 256 elements (64 round trips) per thread. Registers: ``cuobjdump -res-usage`` of
PyTorch 2.14.1's ``reduce_kernel<512, 1>`` instances for float, Half and BFloat16 sum, mean,
max and min gives 26-32 on sm_80, sm_90 and sm_100 and 26-36 on sm_86 (whose SMs hold 1,536
threads, three 512-thread CTAs either way), so four CTAs of 512 threads share an SM of 2,048:
``REGISTERS = 32``. Reduced axes that lead (attr ``dim``, a bias gradient's ``dy.sum(0)``) take
``setReduceConfig``'s other branch (:func:`aten_reduce_kernel`): lanes across the outputs,
``get_output_vec_size`` outputs a load, the same splits over warps and CTAs.

``argmax`` and ``argmin`` (``ArgMaxOps<float>``: a value and its int64 index per accumulator,
16-bit inputs compared in fp32) are instantiated with ``input_vec_size = 4``, so their loads are
vectorized in every dtype, with 32-38 registers (``cuobjdump -res-usage``, PyTorch 2.14.1,
sm_80 to sm_100). Where reduced axes lead, the launch that loads ``v`` = 2 or 4 outputs at once
is ``reduce_kernel<512 / v, v>``, which holds more: 30-62 and 44-92 registers. The launch here
keeps ``REGISTERS``; the op's route puts in the counted registers
(:func:`~opmodel.models.streaming.counted_reduce.reduce_registers`).

Issue cost (:mod:`~opmodel.models.streaming.counted_reduce`):
``configs/instructions/aten_reduce.yaml`` holds, per
architecture, dtype and function, the issue cycles per element of the loop a thread walks its
row with (``scripts/count_reduce_sass.py``: one iteration's common path over its 4 elements,
the busiest of the SMSP's issue slot and pipes; no fit). A thread issues that arithmetic
between one step's load and the next, so the structure sets ``serial_arithmetic``. Reductions
over a leading block of axes run the launches' loops over outputs, counted too; over scattered
axes a loop through an offset calculator, not counted (0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from opmodel.hardware.structure import SmSpec
from opmodel.models.streaming.structure import StreamKernel

__all__ = [
    "LAUNCHES",
    "MAX_THREADS",
    "REGISTERS",
    "VALUES_PER_STEP",
    "ReduceShape",
    "aten_reduce_kernel",
    "output_vector",
    "vectorized",
]


MAX_THREADS = 512  # Reduce.cuh: max_reduce_threads (256 only for complex double)
REGISTERS = 32  # counted: PyTorch 2.14.1 reduce_kernel<512, 1> instances (module docstring)
VALUES_PER_STEP = 4  # vt0 (and the 4-element input vector): elements one round trip brings
_MIN_VALUES = 16  # setReduceConfig: min_values_per_thread
_MAX_VALUES = 256  # setReduceConfig: max_values_per_thread
_VECTOR_FROM = 128  # vectorized input needs dim0 > 128
_WARP = 32
LAUNCHES = (
    "reduce_kernel (a row of lanes per output)",
    "reduce_kernel (the block's warps split each output's values)",
    "reduce_kernel (CTAs split each output's values, the last sums their partials)",
)
"""The kernel's name in the diagnostics by how ``setReduceConfig`` splits each output's values:
over one row of lanes, over the block's warps too, or over CTAs as well."""


def _launch(split_warps: bool, ctas_per_output: int) -> str:
    return LAUNCHES[2 if ctas_per_output > 1 else int(split_warps)]


def _pow2_floor(value: int) -> int:
    return 1 << (max(1, value).bit_length() - 1)


def _block(dim0: int, dim1: int, most: int = MAX_THREADS) -> tuple[int, int]:
    """``set_block_dimension``: (width, height) of a block of at most ``most`` threads."""
    p0 = _pow2_floor(dim0) if dim0 < most else most
    p1 = _pow2_floor(dim1) if dim1 < most else most
    width = min(p0, _WARP)
    height = min(p1, most // width)
    width = min(p0, most // height)
    return width, height


@dataclass(frozen=True, slots=True)
class ReduceShape:
    """What ``setReduceConfig`` reads of a reduction: ``outputs`` results of ``length`` values
    each, of ``element_bytes``; ``inner_outputs`` outputs next to each other in the input after
    its last reduced axis (1: the last axis is reduced); ``reduced_block``: the reduced axes
    coalesce into one (a contiguous block of axes); ``registers`` per thread of the instance
    that runs it (the counted ones, :mod:`~opmodel.models.streaming.counted_reduce`)."""

    outputs: int
    length: int
    element_bytes: int
    function: str = "sum"
    inner_outputs: int = 1
    reduced_block: bool = True
    registers: int = REGISTERS


def output_vector(inner_outputs: int) -> int:
    """``get_output_vec_size``: outputs one load brings when the reduced axes lead, 4, 2 or 1,
    the most that divides the run of ``inner_outputs`` (an aligned tensor assumed)."""
    vec = 4
    while inner_outputs % vec:
        vec //= 2
    return vec


def vectorized(length: int, element_bytes: int, function: str) -> bool:
    """Whether ATen loads the row in 4-element vectors: a row of more than 128 elements and
    ``vt0 >= input_vec_size`` (16-bit sum and mean are instantiated with 8, so not them)."""
    sixteen_bit_sum = element_bytes == 2 and function in ("sum", "mean")
    return length > _VECTOR_FROM and not sixteen_bit_sum


def _check(*counts: int) -> None:
    if min(counts) < 1:
        raise ValueError(
            "aten_reduce_kernel: outputs, length, element_bytes, sm_count and threads_per_sm "
            f"must be >= 1 (got {', '.join(str(c) for c in counts)})"
        )


def _ctas_per_output(values: int, grid: int, target: int) -> int:
    """How many CTAs share a row the block's warps already split: none while a thread holds
    fewer than 256 values or the grid fills the device's ``target`` CTAs."""
    if values < _MAX_VALUES or grid > target:
        return 1
    return max(
        min(math.ceil(target / grid), math.ceil(values / _MIN_VALUES)),
        math.ceil(values / _MAX_VALUES),
    )


@dataclass(frozen=True, slots=True)
class _Block:
    """A launch's block: ``width`` lanes a row, ``height`` rows; ``lane_values`` each lane
    would hold alone; ``row_outputs`` the outputs one row of lanes covers; ``lane_reduce``:
    the row's lanes reduce together (the reduced axis is innermost)."""

    width: int
    height: int
    lane_values: int
    row_outputs: int
    lane_reduce: bool


def _split(shape: ReduceShape, block: _Block, sms: tuple[int, int]) -> StreamKernel:
    """The warps split each output's values when a lane would hold ``min(16 height, 256)`` or
    more (a shared-memory reduction), else each row of lanes takes its own outputs; then CTAs
    split them (:func:`_ctas_per_output`; the last CTA sums the partials)."""
    threads = block.width * block.height
    values = block.lane_values
    split_warps = values >= min(block.height * _MIN_VALUES, _MAX_VALUES)
    outputs_per_cta = block.row_outputs * (1 if split_warps else block.height)
    if split_warps:
        values = math.ceil(values / block.height)
    grid = math.ceil(shape.outputs / outputs_per_cta)
    target = sms[0] * max(1, sms[1] // threads)
    ctas_per_output = _ctas_per_output(values, grid, target) if split_warps else 1
    values = math.ceil(values / ctas_per_output)
    reduce_across = block.lane_reduce or split_warps  # a reduction in the block
    return StreamKernel(
        name=_launch(split_warps, ctas_per_output),
        implementation="pytorch",
        ctas=grid * ctas_per_output,
        threads_per_cta=threads,
        registers_per_thread=shape.registers,
        elements_per_cta=max(1, math.ceil(outputs_per_cta * shape.length / ctas_per_output)),
        serial_loads=math.ceil(values / VALUES_PER_STEP),
        global_passes=1,
        reductions=int(reduce_across) + int(ctas_per_output > 1),
        # a thread folds each step's values in before it issues the next step's load
        serial_arithmetic=True,
    )


def aten_reduce_kernel(shape: ReduceShape, sm: SmSpec) -> StreamKernel:
    """The structure ATen's ``setReduceConfig`` gives ``shape`` on a GPU of ``sm``'s SMs (their
    count and threads per SM, ATen's ``multiProcessorCount`` and
    ``maxThreadsPerMultiProcessor``). The reduced axis innermost: the block's lanes split each
    output's values. The reduced axes leading (``dy.sum(0)``): its lanes take runs of outputs,
    ``output_vector`` of them a load (the block at most 512 / that many threads), and a lane
    walks all of an output's values. Either way a thread's step brings four values (``vt0``)."""
    threads_per_sm = sm.max_warps_per_sm * sm.warp_size
    _check(shape.outputs, shape.length, shape.element_bytes, sm.sm_count, threads_per_sm)
    sms = (sm.sm_count, threads_per_sm)
    if shape.inner_outputs > 1:
        vec = output_vector(shape.inner_outputs)
        width, height = _block(shape.outputs // vec, shape.length, MAX_THREADS // vec)
        return _split(shape, _Block(width, height, shape.length, width * vec, False), sms)
    vector = shape.reduced_block and vectorized(shape.length, shape.element_bytes, shape.function)
    dim0 = shape.length // VALUES_PER_STEP if vector else shape.length
    width, height = _block(dim0, shape.outputs)
    return _split(shape, _Block(width, height, math.ceil(shape.length / width), 1, True), sms)
