"""Registers per thread of ATen's multi-tensor-apply kernels, the passes of an optimizer step
(:mod:`opmodel.formulas.optimizer`; the effective model's
:mod:`~opmodel.models.effective_roofline.optimizer_op`), by the SASS a GPU runs.

Counted with ``cuobjdump -res-usage`` from PyTorch 2.14.1's ``libtorch_cuda.so`` (``python
scripts/count_optimizer_registers.py``): for each pass, the most registers of the float and
bfloat16 instances of the ATen functor and op that run it (fused SGD's
``FusedSgdMathFunctor`` with 2 or 3 tensor lists, Adam(W)'s ``FusedAdamMathFunctor`` without
amsgrad, and the ``torch._foreach_*`` kernels: ``lerp_`` a ``TernaryOpScalarFunctor``,
``mul_`` and ``add_`` of a scalar a ``BinaryOpScalarFunctor``, ``add_`` of a list with alpha a
``BinaryOpListAlphaFunctor``, ``addcmul_`` a ``PointwiseOpScalarFunctor``, ``addcdiv_`` with a
list of scalars a ``PointwiseOpScalarListFunctor``, ``sqrt`` a ``UnaryOpFunctor``, ``div_`` by a
list of scalars a ``BinaryOpScalarListFunctor``). A 512-thread CTA of 33-40 registers leaves
room for three on an Ampere or Hopper SM, of 41-64 for two. Elsewhere (AMD GPUs, a pass not
listed): fused Adam(W) 64, the figure of PyTorch pull request #117872's sm_90 table, and 32,
an estimate, for the others.
"""

from __future__ import annotations

from opmodel.models.shared.sass_code import sass_architecture

__all__ = ["REGISTERS", "mta_registers"]

# (pass, tensor-list depth) -> {SASS architecture: registers per thread}
REGISTERS = {
    ("fused_sgd", 2): {"sm80": 45, "sm86": 47, "sm90": 44, "sm100": 39},
    ("fused_sgd", 3): {"sm80": 62, "sm86": 58, "sm90": 58, "sm100": 40},
    ("fused_adam", 4): {"sm80": 64, "sm86": 64, "sm90": 64, "sm100": 56},
    ("foreach_lerp_", 2): {"sm80": 32, "sm86": 40, "sm90": 32, "sm100": 32},
    ("foreach_mul_", 1): {"sm80": 28, "sm86": 30, "sm90": 27, "sm100": 32},
    ("foreach_add_", 1): {"sm80": 28, "sm86": 30, "sm90": 27, "sm100": 32},
    ("foreach_add_", 2): {"sm80": 32, "sm86": 40, "sm90": 32, "sm100": 32},
    ("foreach_addcmul_", 3): {"sm80": 32, "sm86": 40, "sm90": 32, "sm100": 32},
    ("foreach_addcdiv_", 3): {"sm80": 36, "sm86": 37, "sm90": 32, "sm100": 38},
    ("foreach_sqrt", 2): {"sm80": 36, "sm86": 36, "sm90": 32, "sm100": 28},
    ("foreach_div_", 1): {"sm80": 35, "sm86": 37, "sm90": 34, "sm100": 34},
}
_FUSED_ADAM = 64  # PyTorch #117872: fused adam(w) on sm_90 after its register cut
_ESTIMATE = 32  # the others where nothing is counted


def mta_registers(name: str, depth: int, architecture: str | None) -> int:
    """Registers per thread of the pass ``name`` over ``depth`` tensor lists on a GPU of
    ``architecture`` (module docstring); Adam and AdamW share one kernel."""
    key = ("fused_adam" if name in ("fused_adam", "fused_adamw") else name, depth)
    fallback = _FUSED_ADAM if key[0] == "fused_adam" else _ESTIMATE
    return REGISTERS.get(key, {}).get(sass_architecture(architecture) or "", fallback)
