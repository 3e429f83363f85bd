"""An optimizer step's arithmetic, its kernels' passes over the tensors, and the launches of
PyTorch's multi-tensor apply.

Tensors are named by letter: ``p`` the parameters, ``g`` the gradients, ``m`` and ``v`` Adam's
moments (``m`` SGD's momentum buffer), ``d`` the temporary a foreach Adam writes (``sqrt(v)``,
in ``v``'s dtype). FLOPs per element count each add, multiply, divide and square root once:

- sgd ``p -= lr g``: 2; sgd_momentum ``m = mu m + g``, ``p -= lr m``: 4;
- adam ``m = b1 m + (1 - b1) g`` (3), ``v = b2 v + (1 - b2) g^2`` (4), ``d = sqrt(v) / c2 + eps``
  (3), ``p -= s m / d`` (3): 13, two of them (sqrt, divide) on the special-function unit;
  adamw adds ``p *= 1 - lr wd``: 14.

A fused step (``torch._fused_adamw_``, ``_fused_sgd_``; apex's and Megatron's fused Adam) reads
``p``, ``g`` and the states once and writes ``p`` and the states once. A foreach step is
PyTorch's chain of ``torch._foreach_*`` kernels, each a full pass (torch/optim/adam.py,
adamw.py and sgd.py, ``_multi_tensor_*``, without ``capturable``, at the default
hyperparameters: Adam without weight decay, AdamW with it, SGD's momentum without dampening
or Nesterov): AdamW ``mul_(p)``, ``lerp_(m, g)``, ``mul_(v)``, ``addcmul_(v, g, g)``,
``d = sqrt(v)``, ``div_(d)``, ``add_(d)``, ``addcdiv_(p, m, d)``; Adam the same without the
first; SGD ``add_(p, g)``; with momentum ``mul_(m)``, ``add_(m, g)``, ``add_(p, m)``.

Multi-tensor apply (ATen's MultiTensorApply.cuh): each CTA of 512 threads takes one chunk of
65,536 elements of one tensor (4 per thread per iteration, 32 iterations a full chunk); a launch
holds at most ``max_blocks_per_launch`` CTAs (320 with the 4 KB kernel-argument limit) and at
most 110, 64, 48, 36 or 30 tensors for 1-5 tensor lists (96 for one list with a scalar list).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = [
    "CHUNK_ELEMENTS",
    "MTA_ILP",
    "MTA_THREADS",
    "OptimizerPass",
    "flops_per_element",
    "multi_tensor_chunks",
    "multi_tensor_launches",
    "optimizer_passes",
]

CHUNK_ELEMENTS = 65536  # kChunkSize
MTA_THREADS = 512  # kBlockSize
MTA_ILP = 4  # kILP: elements per thread per iteration
_MAX_TENSORS = (110, 64, 48, 36, 30)  # depth_to_max_tensors, 4 KB kernel arguments
_MAX_TENSORS_SCALAR_LIST = (96, 64, 48, 36, 30)  # depth_to_max_tensors_scalarlist


@dataclass(frozen=True, slots=True)
class OptimizerPass:
    """One kernel's walk over the step's elements: the tensors it reads and writes (letters,
    module docstring), its tensor lists (``depth``), whether it takes a list of scalars, and
    its arithmetic per element."""

    name: str
    reads: str
    writes: str
    depth: int
    scalar_list: bool
    flops: int
    sfu: int = 0


_FOREACH_ADAM = (
    OptimizerPass("foreach_lerp_", "mg", "m", 2, False, 3),
    OptimizerPass("foreach_mul_", "v", "v", 1, False, 1),
    OptimizerPass("foreach_addcmul_", "vg", "v", 3, False, 3),
    OptimizerPass("foreach_sqrt", "v", "d", 2, False, 1, 1),
    OptimizerPass("foreach_div_", "d", "d", 1, True, 1),
    OptimizerPass("foreach_add_", "d", "d", 1, False, 1),
    OptimizerPass("foreach_addcdiv_", "pmd", "p", 3, True, 3, 1),
)
_WEIGHT_DECAY = OptimizerPass("foreach_mul_", "p", "p", 1, False, 1)
_PASSES = {
    ("sgd", "fused"): (OptimizerPass("fused_sgd", "pg", "p", 2, False, 2),),
    ("sgd_momentum", "fused"): (OptimizerPass("fused_sgd", "pgm", "pm", 3, False, 4),),
    ("adam", "fused"): (OptimizerPass("fused_adam", "pgmv", "pmv", 4, False, 13, 2),),
    ("adamw", "fused"): (OptimizerPass("fused_adamw", "pgmv", "pmv", 4, False, 14, 2),),
    ("sgd", "foreach"): (OptimizerPass("foreach_add_", "pg", "p", 2, False, 2),),
    ("sgd_momentum", "foreach"): (
        OptimizerPass("foreach_mul_", "m", "m", 1, False, 1),
        OptimizerPass("foreach_add_", "mg", "m", 2, False, 1),
        OptimizerPass("foreach_add_", "pm", "p", 2, False, 2),
    ),
    ("adam", "foreach"): _FOREACH_ADAM,
    ("adamw", "foreach"): (_WEIGHT_DECAY, *_FOREACH_ADAM),
}


def flops_per_element(algorithm: str) -> int:
    """FLOPs of one parameter's update (module docstring): those of the fused kernel, which
    makes the whole update in one pass."""
    return _PASSES[algorithm, "fused"][0].flops


def optimizer_passes(algorithm: str, implementation: str) -> tuple[OptimizerPass, ...]:
    """The kernels ``implementation`` runs for one ``algorithm`` step, in order."""
    return _PASSES[algorithm, implementation]


def multi_tensor_chunks(elements: int, tensors: int) -> tuple[int, int]:
    """``(elements of a tensor's full chunk, chunks of every tensor)`` for ``elements`` split
    into ``tensors`` equal tensors, each starting its own chunks: the first is what the
    longest CTA walks."""
    per_tensor = math.ceil(elements / tensors)
    return min(per_tensor, CHUNK_ELEMENTS), tensors * math.ceil(per_tensor / CHUNK_ELEMENTS)


def multi_tensor_launches(
    elements: int, tensors: int, step: OptimizerPass, max_blocks: int
) -> tuple[tuple[int, int], tuple[int, int]]:
    """The launches of one pass over ``elements`` split into ``tensors`` equal tensors, as
    ``((launches, CTAs each), (launches, CTAs each))``: every tensor starts its own chunks,
    and a launch closes when it holds ``max_blocks`` CTAs or its tensor list is full; the
    chunks spread as evenly as they go over the launches (a closed form of ATen's loop), so
    some launches hold one CTA more than the others (the second pair; 0 launches when even)."""
    chunks = multi_tensor_chunks(elements, tensors)[1]
    limits = _MAX_TENSORS_SCALAR_LIST if step.scalar_list else _MAX_TENSORS
    launches = max(math.ceil(chunks / max_blocks), math.ceil(tensors / limits[step.depth - 1]))
    each, larger = divmod(chunks, launches)  # chunks >= tensors >= launches, so each >= 1
    return (launches - larger, each), (larger, each + 1)
