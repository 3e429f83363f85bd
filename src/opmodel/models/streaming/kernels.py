"""The structure of a streaming kernel, per implementation (who wrote the kernel).

A streaming kernel reads its inputs once or twice, does a little arithmetic per element, maybe
reduces each row, and writes its outputs. Its time is set by how it is organised: CTA size,
rows per CTA, how many loads each thread has in flight, how many times it walks the row, and
how many block-wide reductions it does. The implementations (attr ``implementation``):

``fused`` (default for row ops; Triton kernels such as Liger-Kernel's, and current fused CUDA
    kernels): one row per CTA; the whole row is loaded at once in 16-byte vectors and kept in
    registers. The CTA has ``num_warps`` warps by Liger-Kernel's rule for
    ``BLOCK = next_pow2(length)`` (``calculate_settings`` in liger_kernel/ops/utils.py: 4 warps,
    8 from 2048, 16 from 8192, 32 from 32768). There is one global pass. The block reductions
    are one for rmsnorm and two each for layernorm (mean, variance) and softmax (max, sum).
    Liger's elementwise kernels have the same structure with no reduction (``relu_squared``,
    and the SwiGLU's SiLU-and-multiply, ``_swiglu_forward_kernel`` and its fused gate-up form:
    one row per program, ``BLOCK_SIZE = next_pow2(n_cols)`` and ``calculate_settings``' warps,
    liger_kernel/ops/swiglu.py and relu_squared.py; the Blackwell column-tiled SwiGLU grid for
    rows from 16,384 is not described). Rows longer than ``FUSED_MAX_ROW`` (65,536; a 1-D
    tensor is one row, as Liger views it) run as blocks of 128 threads x one 16-byte vector,
    as Triton's pointwise kernels (TorchInductor's among them) do. The rotary embedding is
    :func:`rope_kernel`.
``vllm`` (vLLM's CUDA kernels of 2023-24 as profiled by Vidur: ``rms_norm_kernel`` in
    csrc/layernorm_kernels.cu and ``act_and_mul_kernel`` in csrc/activation_kernels.cu): one
    row (token) per CTA of ``min(length, 1024)`` threads. Each thread strides over the row
    with scalar loads, one iteration after another, and each iteration waits for its load.
    rms_norm walks the row twice: sum of squares, one block reduction, then it re-reads the
    input to normalise.
``pytorch`` (ATen): elementwise ops use ``vectorized_elementwise_kernel`` (CUDALoops.cuh):
    128 threads per CTA and 4 elements per thread, loaded as one vector; with ATen's 128-bit
    vectorization (attr ``aten_128bit_vectors``) a 16-bit dtype takes 8 elements per thread,
    one 16-byte vector per input (Nsight Compute on an H200 with PyTorch 2.11: bf16 add, SiLU
    and GELU run ``vectorized_elementwise_kernel<8, ...>`` with 128 threads and a grid of
    elements / 1024). ``layer_norm`` is one
    row per CTA: a Welford pass over the row, then a second pass that re-reads it to
    normalise; each pass strides over the row in vectors of 4 elements (``vec_size = 4`` in
    layer_norm_kernel.cu, 8 bytes in fp16) with 128 threads. Softmax over rows of up to
    2048 elements and 8 KiB (``dim_size <= 2048 && dim_size * sizeof(scalar_t) <= 8192`` in
    SoftMax.cu's host_softmax; ncu on an H200 with PyTorch 2.11 shows ``softmax_warp_forward``
    for 2048 bf16 elements) is ATen's persistent warp softmax: a warp per row (``min(32,
    next_pow2(length))`` lanes, two rows to them up to 128 elements), the row in registers,
    one pass. Its loads take one element per thread per iteration
    (``WARP_ITERATIONS = next_pow2(length) / 32``); the warp keeps ``u`` of them in flight, a
    calibration by element size (:mod:`~opmodel.models.streaming.aten_softmax`, fitted on an
    H200's single-wave rows), so a row takes ``WARP_ITERATIONS / u`` round trips. Its
    registers are counted from its SASS where the GPU's architecture has a count
    (:mod:`~opmodel.models.streaming.counted`), else ``16 +`` the values a lane holds (ncu: 80
    for 2048 bf16 elements, 64 values per thread).
    Longer rows take one row per CTA of ``min(length, 1024)`` threads
    (``SoftMaxForward_getBlockSize``): up to 9216 elements ``cunn_SoftMaxForwardReg`` loads the
    row once into registers, above it ``cunn_SoftMaxForward`` walks it three times (max, sum,
    write); both have barrier-separated phases and a calibrated issue cost
    (:mod:`~opmodel.models.streaming.aten_softmax`).

Register counts are estimates (the compiled kernels are not available here); each is stated
where it is set. Elementwise ops default to ``pytorch``, row ops to ``fused``.
"""

from __future__ import annotations

import dataclasses
import math

from opmodel.core.attrs import STREAMING_IMPLEMENTATIONS
from opmodel.core.enums import OpKind
from opmodel.models.streaming.aten_rows import aten_row_kernel
from opmodel.models.streaming.rope import VLLM_REGISTERS, rope_kernel
from opmodel.models.streaming.structure import (
    ROW_REDUCTIONS,
    VECTOR_BYTES,
    StreamKernel,
    held_row_registers,
)

__all__ = [
    "ELEMENTWISE_SFU_OPS",
    "FUSED_MAX_ROW",
    "IMPLEMENTATIONS",
    "StreamKernel",
    "aten_elements_per_thread",
    "aten_elementwise_kernel",
    "aten_thread_loop",
    "rope_kernel",
    "runs_aten_elementwise",
    "streaming_kernel",
]

IMPLEMENTATIONS = STREAMING_IMPLEMENTATIONS  # the choices of attr ``implementation``
_ELEMENTWISE_THREADS = 128  # ATen CUDALoops.cuh: num_threads() = 4 warps
_ELEMENTWISE_PER_THREAD = 4  # ATen CUDALoops.cuh: thread_work_size() = 4
# vLLM's rms_norm_kernel: Vidur's times step every 216 tokens on A100 (2 x 108 SMs) and every
# 264 on H100 (2 x 132), so two 1024-thread CTAs fit on an SM: at most 32 registers per thread
# (65,536 / 2,048); docs/models/streaming.md, "vLLM RMSNorm"
_VLLM_RMS_NORM_REGISTERS = 32
ELEMENTWISE_SFU_OPS = {
    "exp": 1,  # MUFU.EX2 after a scaling FMUL
    "tanh": 2,  # EX2 and RCP: precise tanhf (MUFU.TANH only under fast math); SASS below
    "sigmoid": 2,  # EX2 and RCP
    "silu": 2,  # x * sigmoid(x)
    "silu_and_mul": 2,
    "gelu": 1,  # erf form: one EX2 (ATen's erff, SASS below)
    "gelu_tanh": 2,  # its tanhf: EX2 and RCP
    "gelu_and_mul": 1,
    "gelu_tanh_and_mul": 2,  # the tanh GELU's EX2 and RCP
    "div": 1,  # RCP, then a multiply and a Newton step
    "silu_backward": 2,  # the sigmoid's EX2 and RCP
    "gelu_backward": 1,  # MUFU.TANH
}
"""Special-function-unit instructions per element for elementwise functions. ATen's kernels
(PyTorch 2.11, sm_80 and sm_90, counted in their SASS like ``configs/instructions/
aten_elementwise.yaml``) issue MUFU.EX2 for exp and the erf GELU, and MUFU.EX2 and MUFU.RCP for
tanh, sigmoid, SiLU and the tanh GELU: no MUFU.TANH, which nvcc emits only under fast math.
Other entries are estimates. Functions not listed use none. Row ops use one exp2 per element
for softmax and one rsqrt per row for the norms, which is negligible. The SFU bound sits under
the issue bound of every counted ATen kernel (two MUFU against 26.5 issue slots per element for
the tanh GELU on sm_90), so these counts set no shipped prediction."""


FUSED_MAX_ROW = 65536
"""The longest row one ``fused`` program holds: Liger-Kernel's ``MAX_FUSED_SIZE``
(``calculate_settings`` in liger_kernel/ops/utils.py raises above it)."""


def _fused_warps(length: int) -> int:
    block = 1 << max(0, math.ceil(math.log2(length)))
    if block >= 32768:
        return 32
    if block >= 8192:
        return 16
    return 8 if block >= 2048 else 4


def aten_elements_per_thread(element_bytes: int, vector_128bit: bool) -> int:
    """Elements one thread of ATen's vectorized elementwise kernel handles: 4 (thread_work_size),
    or one 16-byte vector, 8 elements, for a 16-bit dtype under 128-bit vectorization. 1-byte
    dtypes keep 4 (PyTorch limited them to 4 on sm_80 and sm_90 for an nvcc bug, PR #174553)
    and 4-byte ones fill 16 bytes with 4 either way."""
    if vector_128bit and element_bytes == 2:
        return VECTOR_BYTES // element_bytes
    return _ELEMENTWISE_PER_THREAD


def _elementwise(
    elements: int,
    *,
    serial_loads: int = 1,
    reductions: int = 0,
    name: str = "vectorized_elementwise_kernel",
    per_thread: int = _ELEMENTWISE_PER_THREAD,
) -> StreamKernel:
    per_cta = _ELEMENTWISE_THREADS * per_thread
    return StreamKernel(
        name=name,
        implementation="pytorch",
        ctas=max(1, math.ceil(elements / per_cta)),
        threads_per_cta=_ELEMENTWISE_THREADS,
        registers_per_thread=32,  # a vector per input plus indexing (ncu on an H200: 32-34)
        elements_per_cta=per_cta,
        serial_loads=serial_loads,
        global_passes=1,
        reductions=reductions,
        # each thread computes its elements once its vector has arrived and stores them before
        # the CTA exits: its arithmetic is part of the CTA's chain
        serial_arithmetic=True,
    )


def aten_thread_loop(
    elements: int, per_thread: int, name: str, round_trips: int | None = None
) -> StreamKernel:
    """An ATen elementwise structure whose threads take their ``per_thread`` elements in
    ``round_trips`` dependent steps (one per element when None: ATen's non-contiguous kernel,
    :mod:`~opmodel.models.streaming.aten_broadcast`)."""
    steps = per_thread if round_trips is None else round_trips
    return _elementwise(elements, serial_loads=steps, name=name, per_thread=per_thread)


def _vllm_row(kind: OpKind, rows: int, length: int, element_bytes: int) -> StreamKernel:
    """vLLM's one-token-per-CTA kernels; elementwise ``rows x length`` covers act_and_mul."""
    threads = min(1024, 32 * math.ceil(length / 32))
    norm = kind is OpKind.RMSNORM
    return StreamKernel(
        name="rms_norm_kernel" if norm else "act_and_mul_kernel",
        implementation="vllm",
        ctas=rows,
        threads_per_cta=threads,
        registers_per_thread=_VLLM_RMS_NORM_REGISTERS if norm else VLLM_REGISTERS,
        elements_per_cta=length,
        serial_loads=math.ceil(length / threads),
        global_passes=2 if norm else 1,
        reductions=ROW_REDUCTIONS.get(kind, 0) and 1,
        # each iteration of the norm's strided loops converts, squares or scales and (second
        # loop) stores before the next load issues, in every CTA of the wave at once
        serial_arithmetic=norm,
        lockstep=norm,
    )


def _fused_row(kind: OpKind, rows: int, length: int, element_bytes: int) -> StreamKernel:
    threads = 32 * _fused_warps(length)
    per_thread = math.ceil((1 << math.ceil(math.log2(max(2, length)))) / threads)
    return StreamKernel(
        name="fused row kernel (one row per CTA, Liger-Kernel style)",
        implementation="fused",
        ctas=rows,
        threads_per_cta=threads,
        registers_per_thread=held_row_registers(per_thread),
        elements_per_cta=length,
        serial_loads=1,
        global_passes=1,
        reductions=ROW_REDUCTIONS.get(kind, 0),
    )


def _fused_elementwise(kind: OpKind, rows: int, length: int, element_bytes: int) -> StreamKernel:
    """Liger's one row per program up to ``FUSED_MAX_ROW``; a longer row, which one program
    cannot hold, as a 1-D grid of element blocks of one 16-byte vector per thread."""
    if length <= FUSED_MAX_ROW:
        return _fused_row(kind, rows, length, element_bytes)
    flat = _elementwise(
        rows * length,
        name="fused elementwise (blocks of elements, Triton pointwise style)",
        per_thread=max(1, VECTOR_BYTES // element_bytes),
    )
    return dataclasses.replace(flat, implementation="fused")


_ROW_BUILDERS = {"vllm": _vllm_row, "fused": _fused_row, "pytorch": aten_row_kernel}


def runs_aten_elementwise(kind: OpKind, implementation: object) -> bool:
    """True when :func:`streaming_kernel` gives ``kind`` ATen's vectorized elementwise
    structure, whose width attr ``aten_128bit_vectors`` sets: copies, and elementwise ops but
    vLLM's (``implementation`` is the op's attr, ``None`` when absent)."""
    return kind is OpKind.COPY or (
        kind is OpKind.ELEMENTWISE and implementation not in ("vllm", "fused")
    )


def aten_elementwise_kernel(kind: OpKind, elements: int, element_bytes: int) -> StreamKernel:
    """ATen's elementwise op or copy of ``elements`` under 128-bit vectorization (attr
    ``aten_128bit_vectors``): :func:`aten_elements_per_thread` elements per thread."""
    return _aten_elementwise(
        kind, elements, aten_elements_per_thread(element_bytes, vector_128bit=True)
    )


def _aten_elementwise(
    kind: OpKind, elements: int, per_thread: int = _ELEMENTWISE_PER_THREAD
) -> StreamKernel:
    """ATen's vectorized elementwise structure for an elementwise op or a copy."""
    if kind is OpKind.COPY:
        name = "copy (ATen elementwise structure)"
        return _elementwise(elements, name=name, per_thread=per_thread)
    return _elementwise(elements, per_thread=per_thread)


def streaming_kernel(
    kind: OpKind, implementation: str | None, rows: int, length: int, element_bytes: int
) -> StreamKernel:
    """The kernel ``implementation`` runs for ``rows`` x ``length`` elements of ``kind``.

    Elementwise ops, copies, embeddings (tokens x hidden) and reductions (output elements x
    reduce length) pass their element count as ``rows * length`` and run ATen's vectorised
    elementwise structure (4 elements per thread; :func:`aten_elementwise_kernel` under
    128-bit vectorization); ``vllm`` and ``fused`` give elementwise ops a row structure (one
    token or row per CTA, as vLLM's activation kernels and Liger's Triton kernels do; their
    rotary embeddings are :func:`rope_kernel`). An
    embedding here is a fused gather (``fused``): ATen's ``index_select``, which every other
    embedding runs, needs the SM count (:mod:`~opmodel.models.streaming.gather`).
    """
    if kind is OpKind.ELEMENTWISE and implementation in ("vllm", "fused"):
        builder = _vllm_row if implementation == "vllm" else _fused_elementwise
        return builder(kind, rows, length, element_bytes)
    if kind in (OpKind.ELEMENTWISE, OpKind.COPY):
        return _aten_elementwise(kind, rows * length)
    if kind is OpKind.EMBEDDING:
        # a fused gather (``fused``; ATen's index_select is streaming.gather): each thread loads
        # its token's index, then the table row it names in vectors: two dependent loads
        gather = "index gather (elementwise structure)"
        fused = _elementwise(rows * length, serial_loads=2, name=gather)
        return dataclasses.replace(fused, implementation="fused")
    if kind is OpKind.REDUCTION:
        # ATen's reduce kernel spreads the input over CTAs with vector loads and finishes with
        # a block reduction (and a cross-CTA step when a row spans several CTAs)
        return _elementwise(
            rows * length, reductions=2 if length > 512 else 1, name="reduce_kernel"
        )
    return _ROW_BUILDERS[implementation or "fused"](kind, rows, length, element_bytes)
