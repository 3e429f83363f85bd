"""Which structure ATen's kernels have in the PyTorch build a measurement ran, as op attrs.

PyTorch's 128-bit vectorization of its elementwise kernels (PR #145746, January 2025, first in
release 2.7) loads 16 bytes per thread and input: 8 elements of a 16-bit dtype, the kernel
``vectorized_elementwise_kernel<8, ...>``. It runs on the compute capabilities PyTorch admits
to its vec8 path, sm_90 and sm_100 (PR #174362 of February 2026 shows an sm_103 GPU still on
``vectorized_elementwise_kernel<4, ...>`` before it widened the gate to every 10.x). Nsight
Compute on an H200 with PyTorch 2.11 shows bf16 add, SiLU and GELU as
``vectorized_elementwise_kernel<8, ...>`` with a grid of elements / 1024 of 128 threads
(``data/measured/h200_2026-12-04_ncu``). Older builds and other GPUs take 4 elements per thread.
"""

from __future__ import annotations

import re

__all__ = ["aten_uses_128bit_vectors"]

FIRST_VERSION = (2, 7)  # PyTorch release with PR #145746
ARCHITECTURES = frozenset({"sm90", "sm100"})  # compute capabilities of the vec8 path


def aten_uses_128bit_vectors(torch_version: str, architecture: str | None) -> bool:
    """True when ``torch_version`` (``torch.__version__``, e.g. ``2.11.0+cu130``) has the 128-bit
    vectorization and ``architecture`` (a hardware config's, e.g. ``sm90``) is in its gate;
    False for an unreadable version."""
    match = re.match(r"(\d+)\.(\d+)", torch_version)
    if match is None or architecture not in ARCHITECTURES:
        return False
    return (int(match.group(1)), int(match.group(2))) >= FIRST_VERSION
