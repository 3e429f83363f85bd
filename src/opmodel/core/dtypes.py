"""Data types with their storage width in bits.

Widths are integers (``bits``); bytes of ``n`` elements are ``ceil(n * bits / 8)`` so that
sub-byte types such as int4 are exact. ``tf32`` is stored in 32-bit words (it is an fp32 storage
format computed with a 10-bit mantissa on tensor cores). ``fp8`` names the 8-bit float family;
``fp8_e4m3`` and ``fp8_e5m2`` are its two OCP variants. Hardware throughput keyed by ``fp8``
applies to both variants unless the config lists a variant explicitly.
"""

from __future__ import annotations

from opmodel.core.enums import StrValueEnum
from opmodel.core.frozen_dict import FrozenDict

__all__ = ["DTYPE_BITS", "DType", "nbytes_of"]


class DType(StrValueEnum):
    """Element data type. String-valued, so YAML and JSON carry plain strings."""

    FP64 = "fp64"
    FP32 = "fp32"
    TF32 = "tf32"
    FP16 = "fp16"
    BF16 = "bf16"
    FP8 = "fp8"
    FP8_E4M3 = "fp8_e4m3"
    FP8_E5M2 = "fp8_e5m2"
    INT64 = "int64"
    INT32 = "int32"
    INT8 = "int8"
    INT4 = "int4"

    @property
    def bits(self) -> int:
        """Storage width of one element in bits."""
        return _BITS[self]

    @property
    def family(self) -> DType:
        """The throughput class: ``fp8`` for both fp8 variants, the type itself otherwise."""
        return DType.FP8 if self in (DType.FP8_E4M3, DType.FP8_E5M2) else self

    @property
    def is_float(self) -> bool:
        """True for floating-point types."""
        return self not in (DType.INT64, DType.INT32, DType.INT8, DType.INT4)


_BITS: dict[DType, int] = {
    DType.FP64: 64,
    DType.FP32: 32,
    DType.TF32: 32,
    DType.FP16: 16,
    DType.BF16: 16,
    DType.FP8: 8,
    DType.FP8_E4M3: 8,
    DType.FP8_E5M2: 8,
    DType.INT64: 64,
    DType.INT32: 32,
    DType.INT8: 8,
    DType.INT4: 4,
}

# ``DType.bits`` as a read-only mapping: one dict lookup where a hot path would call the property
DTYPE_BITS = FrozenDict(_BITS)


def nbytes_of(num_elements: int, dtype: DType) -> int:
    """Bytes occupied by ``num_elements`` elements: ``ceil(num_elements * bits / 8)``."""
    return (num_elements * _BITS[dtype] + 7) // 8
