"""Which structure ATen's kernels have in the PyTorch build a measurement ran, as op attrs.

PyTorch's 128-bit vectorization of its elementwise kernels (PR #145746, January 2025, first in
release 2.7) loads 16 bytes per thread and input: 8 elements of a 16-bit dtype, the kernel
``vectorized_elementwise_kernel<8, ...>``. It runs on the compute capabilities PyTorch admits
to its vec8 path, sm_90 and sm_100 (PR #174362 of February 2026 shows an sm_103 GPU still on
``vectorized_elementwise_kernel<4, ...>`` before it widened the gate to every 10.x). Nsight
Compute on an H200 with PyTorch 2.11 shows bf16 add, SiLU and GELU as
``vectorized_elementwise_kernel<8, ...>`` with a grid of elements / 1024 of 128 threads
(``data/measured/h200_2026-12-04_ncu``). Older builds and other GPUs take 4 elements per thread.

PyTorch's SDPA puts cuDNN's fused attention first on compute capability 9.0 and 10.0 once its
bundled cuDNN is newer than 9.15 (``check_prefer_cudnn_attention`` in
aten/src/ATen/native/transformers/cuda/sdp_utils.cpp, which 2.10 has; the wheels of 2.11 are the
first to bundle such a cuDNN: huggingface/transformers PR #48163, which found PyTorch 2.11
already doing what it proposed). Nsight Compute on this project's H200 with PyTorch 2.11 names
``cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma`` for prefill. Its persistent
scheduler starts the query blocks in launch order, the longest last (docs/models/attention.md),
which an attention op says with ``cta_order: in_order``.
"""

from __future__ import annotations

import re

__all__ = ["aten_uses_128bit_vectors", "sdpa_runs_cudnn"]

FIRST_VERSION = (2, 7)  # PyTorch release with PR #145746
ARCHITECTURES = frozenset({"sm90", "sm100"})  # compute capabilities of the vec8 path
CUDNN_SDPA_FIRST_VERSION = (2, 11)  # the first wheels whose cuDNN passes SDPA's preference gate
CUDNN_SDPA_ARCHITECTURES = frozenset({"sm90", "sm100"})  # compute capability 9.0 and 10.0


def _version(torch_version: str) -> tuple[int, int] | None:
    match = re.match(r"(\d+)\.(\d+)", torch_version)
    return None if match is None else (int(match.group(1)), int(match.group(2)))


def _gated(
    torch_version: str,
    architecture: str | None,
    first: tuple[int, int],
    architectures: frozenset[str],
) -> bool:
    """True when ``torch_version`` is ``first`` or later and ``architecture`` is gated in;
    False for an unreadable version."""
    version = _version(torch_version)
    return version is not None and architecture in architectures and version >= first


def aten_uses_128bit_vectors(torch_version: str, architecture: str | None) -> bool:
    """True when ``torch_version`` (``torch.__version__``, e.g. ``2.11.0+cu130``) has the 128-bit
    vectorization and ``architecture`` (a hardware config's, e.g. ``sm90``) is in its gate;
    False for an unreadable version."""
    return _gated(torch_version, architecture, FIRST_VERSION, ARCHITECTURES)


def sdpa_runs_cudnn(torch_version: str, architecture: str | None) -> bool:
    """True when PyTorch's SDPA of ``torch_version`` runs cuDNN's fused attention on a GPU of
    ``architecture`` by default (module docstring); False for an unreadable version."""
    return _gated(torch_version, architecture, CUDNN_SDPA_FIRST_VERSION, CUDNN_SDPA_ARCHITECTURES)
