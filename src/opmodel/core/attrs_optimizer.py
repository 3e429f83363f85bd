"""The attributes of an optimizer step (``OpKind.OPTIMIZER``)."""

from __future__ import annotations

from opmodel.core.attr_spec import AttrSpec

__all__ = [
    "OPTIMIZER",
    "OPTIMIZER_ALGORITHMS",
    "OPTIMIZER_IMPLEMENTATIONS",
    "OPTIMIZER_STATES",
]

OPTIMIZER_STATES = {"sgd": 0, "sgd_momentum": 1, "adam": 2, "adamw": 2}
"""The state tensors each algorithm keeps per parameter (``workspace`` tensors of the op):
SGD with momentum its momentum buffer, Adam and AdamW their first and second moments."""

OPTIMIZER_ALGORITHMS = tuple(OPTIMIZER_STATES)
"""The update rules the models know (``torch.optim``'s SGD, Adam and AdamW)."""

OPTIMIZER_IMPLEMENTATIONS = ("fused", "foreach")
"""How the step runs: one multi-tensor kernel that reads every tensor once (``fused``:
``torch.optim`` with ``fused=True``, apex's and Megatron's fused Adam and SGD), or PyTorch's
default for CUDA tensors, a chain of ``torch._foreach_*`` kernels (``foreach``)."""

OPTIMIZER = (
    AttrSpec(
        name="algorithm",
        kind=str,
        choices=OPTIMIZER_ALGORITHMS,
        doc="the update (required): sgd, sgd_momentum, adam or adamw (decoupled weight decay)",
    ),
    AttrSpec(
        name="implementation",
        kind=str,
        choices=OPTIMIZER_IMPLEMENTATIONS,
        doc="fused (default: one multi-tensor kernel, torch.optim's fused=True, apex and "
        "Megatron) or foreach (PyTorch's default: a chain of torch._foreach_* kernels); "
        "effective_roofline",
    ),
    AttrSpec(
        name="tensors",
        kind=int,
        minimum=1,
        doc="parameter tensors the step's elements are split into, of equal size (default 1); "
        "each starts its own 64 Ki-element chunks and takes a slot of a launch's tensor list",
    ),
    AttrSpec(
        name="max_blocks_per_launch",
        kind=int,
        minimum=1,
        doc="CTAs one multi-tensor launch may hold (default 320, the 4 KB kernel-argument "
        "limit of PyTorch's CUDA 12 builds; 2240 with 32 KB arguments, its CUDA 13 builds)",
    ),
)
