"""opmodel: predict how one accelerator operation performs.

``model.predict(local_op, hardware) -> OpProfile``. See the README for a quickstart.
"""

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
]

__version__ = "0.1.0"
