"""The rotary embedding's kernels (RoPE over ``[tokens, heads, head size]``): vLLM's
``rotary_embedding_kernel`` and Liger-Kernel's ``_triton_rope``, the structures attr
``implementation`` names for ``function: rope`` (docs/models/streaming.md)."""

from __future__ import annotations

import math

from opmodel.models.streaming.structure import StreamKernel, held_row_registers

__all__ = ["VLLM_REGISTERS", "rope_kernel"]

_TRITON_DEFAULT_WARPS = 4  # triton.jit's num_warps when a launch names none
_ROPE_MAX_THREADS = 512  # vLLM pos_encoding_kernels.cu: block = min(heads x rot_dim / 2, 512)
# estimate for vLLM's activation and rotary kernels: accumulator, 64-bit position, strides
# and addresses in the loop (docs/models/streaming.md on what the data suggest)
VLLM_REGISTERS = 40


def rope_kernel(tokens: int, length: int, implementation: str = "vllm") -> StreamKernel:
    """The rotary embedding of ``tokens`` tokens of ``length`` q and k elements each.

    ``fused``: Liger-Kernel's ``_triton_rope`` (liger_kernel/ops/rope.py), one token per
    program of Triton's default 4 warps (the launch names none). It loads the token's cos and
    sin halves and both halves of every q and k head at once (no load waits on another),
    rotates them in registers and stores them in place: one pass, all loads in flight.

    ``vllm``: vLLM's ``rotary_embedding_kernel`` (csrc/pos_encoding_kernels.cu): one token
    per CTA of ``min(heads x rot_dim / 2, 512)`` threads. Each thread first loads the token's
    position (the cos/sin row's address depends on it), then loops over (head, pair) slots;
    each iteration loads the cos/sin pair and the two rotated elements, then stores them.
    ``length`` is the token's q and k elements (heads x head size), so the loop runs
    ``ceil(pairs / threads)`` times after the position load. The kernel sizes its block from
    the query heads alone and loops over q and k separately; with GQA or MQA that differs by at
    most one iteration."""
    if implementation == "fused":
        threads = 32 * _TRITON_DEFAULT_WARPS
        return StreamKernel(
            name="_triton_rope (Liger-Kernel: one token per program, 4 warps)",
            implementation="fused",
            ctas=tokens,
            threads_per_cta=threads,
            registers_per_thread=held_row_registers(math.ceil(length / threads)),
            elements_per_cta=length,
            serial_loads=1,
            global_passes=1,
            reductions=0,
        )
    pairs = max(1, length // 2)
    threads = min(_ROPE_MAX_THREADS, 32 * math.ceil(pairs / 32))
    return StreamKernel(
        name="rotary_embedding_kernel",
        implementation="vllm",
        ctas=tokens,
        threads_per_cta=threads,
        registers_per_thread=VLLM_REGISTERS,
        elements_per_cta=length,
        serial_loads=1 + math.ceil(pairs / threads),
        global_passes=1,
        reductions=0,
    )
