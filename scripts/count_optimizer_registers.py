"""Registers per thread of ATen's multi-tensor-apply kernels of an optimizer step, from a
PyTorch build's cubins.

Usage:
    python scripts/count_optimizer_registers.py --library torch/lib/libtorch_cuda.so \
        [--cuobjdump cuobjdump] [--arch sm_80 ...]

Reads ``cuobjdump -res-usage`` of ``libtorch_cuda.so`` (no GPU; ``pip install torch==2.14.1
nvidia-cuda-cuobjdump`` gives both), demangles the ``multi_tensor_apply_kernel`` instances
(``c++filt``) and prints, per architecture, the most registers any float or bfloat16
instance of each (functor, tensor-list depth) pair takes: the fused SGD and Adam(W) steps
(``FusedSgdMathFunctor``, ``FusedAdamMathFunctor`` without amsgrad) and the ``torch._foreach_*``
kernels of ``torch/optim``'s foreach chains. The counts set how many 512-thread CTAs share an
SM (``src/opmodel/models/streaming/multi_tensor.py``, ``REGISTERS``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sass_listing import demangle, register_arguments, res_usage, res_usage_listings

# the model's pass (formulas/optimizer.py: its name and tensor-list depth) -> the ATen
# instance that runs it: functor, depth, and the op it applies (None: the fused steps)
PASSES = {
    ("fused_sgd", 2): ("FusedSgdMathFunctor", 2, None),
    ("fused_sgd", 3): ("FusedSgdMathFunctor", 3, None),
    ("fused_adam", 4): ("FusedAdamMathFunctor", 4, None),
    ("foreach_lerp_", 2): ("TernaryOpScalarFunctor", 2, "LerpFunctor"),
    ("foreach_mul_", 1): ("BinaryOpScalarFunctor", 1, "multiplies"),
    ("foreach_add_", 1): ("BinaryOpScalarFunctor", 1, "plus"),
    ("foreach_add_", 2): ("BinaryOpListAlphaFunctor", 2, "plus"),
    ("foreach_addcmul_", 3): ("PointwiseOpScalarFunctor", 3, "multiplies"),
    ("foreach_addcdiv_", 3): ("PointwiseOpScalarListFunctor", 3, "divides"),
    ("foreach_sqrt", 2): ("UnaryOpFunctor", 2, "Sqrt"),
    ("foreach_div_", 1): ("BinaryOpScalarListFunctor", 1, "divides"),
}
ARCHITECTURES = ("sm_80", "sm_86", "sm_90", "sm_100")
# TensorListMetadata<depth> (or its scalar-list form), then the functor and its element type
_INSTANCE = re.compile(
    r"TensorList\w*Metadata<(?:[^<>]*?,\s*)?(\d+)>, (?:\w+::|\(anonymous namespace\)::)*"
    r"(\w+Functor)<(?:float|c10::BFloat16)\b[^>]*>(?:, (?:\w+::)*(\w+)<)?"
)


def instances(listing: str) -> list[tuple[str, int]]:
    """(mangled name, registers) of every multi_tensor_apply_kernel in a -res-usage listing."""
    return [(n, r) for n, r in res_usage(listing) if "multi_tensor_apply_kernel" in n]


def registers(demangled: Sequence[str], counts: Sequence[int]) -> dict[tuple[str, int], int]:
    """The model's (pass, depth) -> the most registers of its ATen instance's float and
    bfloat16 kernels (``PASSES``); Adam's amsgrad kernels (a fifth tensor list) do not match."""
    wanted = {instance: step for step, instance in PASSES.items()}
    out: dict[tuple[str, int], int] = {}
    for name, count in zip(demangled, counts, strict=True):
        match = _INSTANCE.search(name)
        if match is None:
            continue
        functor, depth = match.group(2), int(match.group(1))
        op = None if functor.startswith("Fused") else match.group(3)
        step = wanted.get((functor, depth, op))
        if step is not None:
            out[step] = max(out.get(step, 0), count)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    name = "count_optimizer_registers"
    args = register_arguments(__doc__.splitlines()[0], argv, ARCHITECTURES, name)
    table = {}
    for arch, listing in res_usage_listings(args).items():
        found = instances(listing)
        table[arch] = registers(demangle([n for n, _ in found]), [c for _, c in found])
    print(f"{'pass':<18} depth " + " ".join(f"{a:>7}" for a in args.arch))
    for step in PASSES:
        cells = " ".join(f"{table[a].get(step, 0):>7}" for a in args.arch)
        print(f"{step[0]:<18} {step[1]:>5} {cells}")
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("count_optimizer_registers", main)
