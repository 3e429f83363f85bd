"""What limited a predicted kernel, read from any model's diagnostics, for per-row reports."""

from __future__ import annotations

__all__ = ["limiter_of"]


def limiter_of(diagnostics: object) -> str:
    """``extended_roofline``'s ``primary/secondary`` bottleneck, ``effective_roofline``'s GEMM
    limiting resources joined by ``+``, a streaming or attention kernel's ``limiter``, the TPU
    path's ``limiting``, or the roofline's ``bound``; ``""`` when the diagnostics name none."""
    primary = getattr(diagnostics, "primary_bottleneck", None)
    if primary is not None:
        return f"{primary}/{getattr(diagnostics, 'secondary_bottleneck', '')}"
    tied = getattr(diagnostics, "limiting_resources", None)
    if tied is not None:
        return "+".join(str(resource) for resource in tied)
    for name in ("limiter", "limiting", "bound"):
        value = getattr(diagnostics, name, None)
        if value is not None:
            return str(value)
    return ""
