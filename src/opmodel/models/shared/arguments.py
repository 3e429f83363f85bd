"""The argument check every model's ``predict`` starts with."""

from __future__ import annotations

from opmodel.core.errors import OpModelError, UnsupportedOpError
from opmodel.core.op import LocalOp
from opmodel.hardware.spec import HardwareSpec

__all__ = ["check_predict_arguments"]


def check_predict_arguments(
    model: str, supported: frozenset[str], op: object, hardware: object
) -> None:
    """Refuse anything but a LocalOp of a supported kind and a HardwareSpec, with one line."""
    if not isinstance(op, LocalOp) or not isinstance(hardware, HardwareSpec):
        msg = (
            f"{model}.predict(op, hardware): expected a LocalOp and a HardwareSpec "
            f"(got {type(op).__name__}, {type(hardware).__name__})"
        )
        if isinstance(hardware, str):  # a config's name or path: say how to get its spec
            msg += f"; load the config first: load_hardware({hardware!r})"
        raise OpModelError(msg)
    if op.kind not in supported:
        kinds = ", ".join(sorted(supported))
        raise UnsupportedOpError(f"model '{model}' does not support {op.kind} (supports: {kinds})")
