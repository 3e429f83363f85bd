"""ATen's reduce kernel (``reduce_kernel`` in aten/src/ATen/native/cuda/Reduce.cuh) for a
reduction over the innermost, contiguous axis: ``torch.sum``, ``mean``, ``max`` and ``min`` of
a whole tensor or of each row.

``setReduceConfig`` picks the launch from the tensor's shape and the GPU, and this module
follows it in closed form for ``outputs`` rows of ``length`` elements (a whole-tensor
reduction is one row):

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
``REGISTERS = 32``. Only the innermost-axis layout is described: the op kind's view reduces
the trailing axes (docs/op_files.md).
"""

from __future__ import annotations

import math

from opmodel.hardware.structure import SmSpec
from opmodel.models.streaming.structure import StreamKernel

__all__ = ["MAX_THREADS", "REGISTERS", "VALUES_PER_STEP", "aten_reduce_kernel"]

MAX_THREADS = 512  # Reduce.cuh: max_reduce_threads (256 only for complex double)
REGISTERS = 32  # counted: PyTorch 2.14.1 reduce_kernel<512, 1> instances (module docstring)
VALUES_PER_STEP = 4  # vt0 (and the 4-element input vector): elements one round trip brings
_MIN_VALUES = 16  # setReduceConfig: min_values_per_thread
_MAX_VALUES = 256  # setReduceConfig: max_values_per_thread
_VECTOR_FROM = 128  # vectorized input needs dim0 > 128
_WARP = 32


def _pow2_floor(value: int) -> int:
    return 1 << (max(1, value).bit_length() - 1)


def _block(dim0: int, dim1: int) -> tuple[int, int]:
    """``set_block_dimension``: (width, height) of the block."""
    p0 = _pow2_floor(dim0) if dim0 < MAX_THREADS else MAX_THREADS
    p1 = _pow2_floor(dim1) if dim1 < MAX_THREADS else MAX_THREADS
    width = min(p0, _WARP)
    height = min(p1, MAX_THREADS // width)
    width = min(p0, MAX_THREADS // height)
    return width, height


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


def aten_reduce_kernel(
    outputs: int, length: int, element_bytes: int, function: str, sm: SmSpec
) -> StreamKernel:
    """The structure ATen's ``setReduceConfig`` gives ``outputs`` reductions of ``length``
    contiguous elements each on a GPU of ``sm``'s SMs (their count and threads per SM, which
    ATen reads as ``multiProcessorCount`` and ``maxThreadsPerMultiProcessor``)."""
    sm_count, threads_per_sm = sm.sm_count, sm.max_warps_per_sm * sm.warp_size
    _check(outputs, length, element_bytes, sm_count, threads_per_sm)
    dim0 = length // VALUES_PER_STEP if vectorized(length, element_bytes, function) else length
    width, height = _block(dim0, outputs)
    threads = width * height
    values = math.ceil(length / width)
    split_warps = values >= min(height * _MIN_VALUES, _MAX_VALUES)
    outputs_per_cta = 1
    if split_warps:
        values = math.ceil(values / height)
    else:
        outputs_per_cta = height
    grid = math.ceil(outputs / outputs_per_cta)
    target = sm_count * max(1, threads_per_sm // threads)
    ctas_per_output = _ctas_per_output(values, grid, target) if split_warps else 1
    values = math.ceil(values / ctas_per_output)
    return StreamKernel(
        name="reduce_kernel",
        implementation="pytorch",
        ctas=grid * ctas_per_output,
        threads_per_cta=threads,
        registers_per_thread=REGISTERS,
        elements_per_cta=max(1, math.ceil(outputs_per_cta * length / ctas_per_output)),
        serial_loads=math.ceil(values / VALUES_PER_STEP),
        global_passes=1,
        # the block's reduction; the last CTA of a row split over CTAs sums their partials
        reductions=2 if ctas_per_output > 1 else 1,
    )
