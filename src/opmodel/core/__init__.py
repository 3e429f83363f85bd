"""Vocabulary shared by every layer: dtypes, ops and views, profiles, errors, the model Protocol."""

from opmodel.core.attrs import AttrValue, FrozenAttrs
from opmodel.core.dtypes import DType, nbytes_of
from opmodel.core.enums import Bound, Engine, OpKind, Phase, TensorRole
from opmodel.core.errors import (
    ConfigError,
    InvalidKernelError,
    OpModelError,
    OpValidationError,
    UnknownNameError,
    UnsupportedDTypeError,
    UnsupportedOpError,
)
from opmodel.core.model import OpModel
from opmodel.core.op import LocalOp, TensorSpec
from opmodel.core.profile import EnergyBreakdown, Footprint, LevelTraffic, OpProfile

__all__ = [
    "AttrValue",
    "Bound",
    "ConfigError",
    "DType",
    "EnergyBreakdown",
    "Engine",
    "Footprint",
    "FrozenAttrs",
    "InvalidKernelError",
    "LevelTraffic",
    "LocalOp",
    "OpKind",
    "OpModel",
    "OpModelError",
    "OpProfile",
    "OpValidationError",
    "Phase",
    "TensorRole",
    "TensorSpec",
    "UnknownNameError",
    "UnsupportedDTypeError",
    "UnsupportedOpError",
    "nbytes_of",
]
