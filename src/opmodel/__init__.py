"""opmodel: predict how one accelerator operation performs.

``model.predict(local_op, hardware) -> OpProfile``. See the README for a quickstart.
"""

from opmodel import ops
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
