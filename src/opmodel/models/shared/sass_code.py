"""Which architecture's compiled code (SASS) a GPU runs, for facts counted from a wheel's SASS
(``configs/instructions/``: :mod:`opmodel.models.streaming.counted`,
:mod:`opmodel.models.attention.counted`), and whether PyTorch builds for it with ROCm."""

from __future__ import annotations

__all__ = ["is_rocm", "sass_architecture"]

# PyTorch's wheels carry no sm_89 SASS; CUDA runs sm_86 binaries on sm_89 (same major version)
_SAME_CODE = {"sm89": "sm86"}


def sass_architecture(architecture: str | None) -> str | None:
    """The architecture whose SASS a GPU of ``architecture`` (a hardware config's field) runs,
    or ``None`` without one."""
    if architecture is None:
        return None
    return _SAME_CODE.get(architecture, architecture)


def is_rocm(architecture: str | None) -> bool:
    """True for the AMD architectures PyTorch builds with ROCm (``cdna*``, ``rdna*``,
    ``gfx*``), whose ATen kernels take their ``USE_ROCM`` branches."""
    return (architecture or "").startswith(("cdna", "rdna", "gfx"))
