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

import argparse
import re
from collections.abc import Sequence
from pathlib import Path

from sass_listing import cuobjdump

KERNELS = (
    "compute_grad_weight",
    "sum_and_scatter",
    "compute_grad_weight_atomic_accumulate",
    "embedding_backward_feature_kernel",
)
ARCHITECTURES = ("sm_80", "sm_86", "sm_90", "sm_100")
_FUNCTION = re.compile(r"Function (\S+):")
_REGISTERS = re.compile(r"REG:(\d+)")
# the kernel name, then its template arguments, in an Itanium-mangled name
_NAME = re.compile(r"\d+(" + "|".join(sorted(KERNELS, key=len, reverse=True)) + r")I(.*?)EEv")
_FLOATS = ("f", "N3c104HalfE", "N3c108BFloat16E")  # float, at::Half, at::BFloat16


def registers(listing: str) -> dict[str, int]:
    """Kernel -> the most registers of its float, half and bfloat16 variants with int64 indices
    in one ``cuobjdump -res-usage`` listing."""
    out: dict[str, int] = {}
    lines = listing.splitlines()
    for line, following in zip(lines, [*lines[1:], ""], strict=True):
        function, count = _FUNCTION.search(line), _REGISTERS.search(following)
        name = _NAME.search(function.group(1)) if function else None
        if name is None or count is None:
            continue
        arguments = name.group(2)
        if not arguments.endswith("l") or not arguments.startswith(_FLOATS):
            continue  # int32 indices or double
        kernel = name.group(1)
        out[kernel] = max(out.get(kernel, 0), int(count.group(1)))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--library", type=Path, required=True, help="libtorch_cuda.so")
    parser.add_argument("--cuobjdump", default="cuobjdump")
    parser.add_argument("--arch", nargs="+", default=list(ARCHITECTURES))
    args = parser.parse_args(argv)
    if not args.library.exists():
        raise SystemExit(f"count_embedding_registers: --library {args.library}: no such file")
    print(f"{'kernel':<40} " + " ".join(f"{a:>7}" for a in args.arch))
    table = {a: registers(cuobjdump(args.cuobjdump, ["-res-usage", "-arch", a, str(args.library)]))
             for a in args.arch}  # fmt: skip
    for kernel in KERNELS:
        cells = " ".join(f"{table[a].get(kernel, 0):>7}" for a in args.arch)
        print(f"{kernel:<40} {cells}")
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("count_embedding_registers", main)
