"""opmodel: predict how one accelerator operation performs.

``model.predict(local_op, hardware) -> OpProfile``. See the README for a quickstart.
"""

from typing import Any

from opmodel.core import (
    ConfigError,
    DType,
    Engine,
    InvalidKernelError,
    LocalOp,
    OpKind,
    OpModelError,
    OpProfile,
    OpValidationError,
    Phase,
    TensorRole,
    TensorSpec,
    UnknownNameError,
    UnsupportedDTypeError,
    UnsupportedOpError,
)
from opmodel.core.backward import backward_of
from opmodel.core.backward_gemm import gemm_backward_of

__all__ = [
    "ConfigError",
    "DType",
    "Engine",
    "InvalidKernelError",
    "LocalOp",
    "OpKind",
    "OpModelError",
    "OpProfile",
    "OpValidationError",
    "Phase",
    "TensorRole",
    "TensorSpec",
    "UnknownNameError",
    "UnsupportedDTypeError",
    "UnsupportedOpError",
    "__version__",
    "backward_of",
    "gemm_backward_of",
    "ops",
]

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """``opmodel.ops`` on first use: the constructors are not imported with the package, which
    every ``opmodel`` command and model import pays (``from opmodel import ops`` imports them)."""
    if name == "ops":
        import opmodel.ops  # noqa: PLC0415 - on first use

        return opmodel.ops
    raise AttributeError(f"module 'opmodel' has no attribute {name!r}")
