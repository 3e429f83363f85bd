"""Registers per thread of ATen's embedding-backward kernels, from a PyTorch build's cubins.

Usage:
    python scripts/count_embedding_registers.py --library torch/lib/libtorch_cuda.so \
        [--cuobjdump cuobjdump] [--arch sm_80 ...]

Reads ``cuobjdump -res-usage`` of ``libtorch_cuda.so`` (no GPU; ``pip install torch==2.14.1
nvidia-cuda-cuobjdump`` gives both) and prints, per architecture, the most registers any
float, half or bfloat16 variant with 64-bit indices of each kernel takes:
``compute_grad_weight``, ``sum_and_scatter``, ``compute_grad_weight_atomic_accumulate``
(aten/src/ATen/native/cuda/EmbeddingBackwardKernel.cu) and
``embedding_backward_feature_kernel`` (Embedding.cu). The counts set how many of their
CTAs share an SM (``src/opmodel/models/streaming/embedding_backward.py``,
``REGISTERS``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sass_listing import register_arguments, res_usage, res_usage_listings

KERNELS = (
    "compute_grad_weight",
    "sum_and_scatter",
    "compute_grad_weight_atomic_accumulate",
    "embedding_backward_feature_kernel",
)
ARCHITECTURES = ("sm_80", "sm_86", "sm_90", "sm_100")
# the kernel name, then its template arguments, in an Itanium-mangled name
_NAME = re.compile(r"\d+(" + "|".join(sorted(KERNELS, key=len, reverse=True)) + r")I(.*?)EEv")
_FLOATS = ("f", "N3c104HalfE", "N3c108BFloat16E")  # float, at::Half, at::BFloat16


def registers(listing: str) -> dict[str, int]:
    """Kernel -> the most registers of its float, half and bfloat16 variants with int64 indices
    in one ``cuobjdump -res-usage`` listing."""
    out: dict[str, int] = {}
    for function, count in res_usage(listing):
        name = _NAME.search(function)
        if name is None:
            continue
        arguments = name.group(2)
        if not arguments.endswith("l") or not arguments.startswith(_FLOATS):
            continue  # int32 indices or double
        kernel = name.group(1)
        out[kernel] = max(out.get(kernel, 0), count)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    name = "count_embedding_registers"
    args = register_arguments(__doc__.splitlines()[0], argv, ARCHITECTURES, name)
    print(f"{'kernel':<40} " + " ".join(f"{a:>7}" for a in args.arch))
    table = {a: registers(listing) for a, listing in res_usage_listings(args).items()}
    for kernel in KERNELS:
        cells = " ".join(f"{table[a].get(kernel, 0):>7}" for a in args.arch)
        print(f"{kernel:<40} {cells}")
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("count_embedding_registers", main)
