"""Data types with their storage width in bits.

Widths are integers (``bits``); bytes of ``n`` elements are ``ceil(n * bits / 8)`` so that
sub-byte types such as int4 are exact. ``tf32`` is stored in 32-bit words (it is an fp32 storage
format computed with a 10-bit mantissa on tensor cores). ``fp8`` names the 8-bit float family;
``fp8_e4m3`` and ``fp8_e5m2`` are its two OCP variants. Hardware throughput keyed by ``fp8``
applies to both variants unless the config lists a variant explicitly.

Block-scaled (microscaling) types carry one 8-bit scale per block of ``scale_block`` elements
along the tensor's contiguous (reduction) dimension, stored beside the elements:

- ``mxfp8``, ``mxfp6``, ``mxfp4``: the OCP Microscaling Formats (MX) v1.0 types, FP8 (E4M3 or
  E5M2), FP6 (E2M3 or E3M2) or FP4 (E2M1) elements with one E8M0 scale per 32 elements;
- ``nvfp4``: NVIDIA's FP4, E2M1 elements with one E4M3 scale per 16 elements (and one fp32
  scale per tensor, four bytes, not counted).

Their bytes are the elements' plus the scales': ``ceil(n * bits / 8) + ceil(n / block)``
(:func:`nbytes_of`); ``storage_bits`` is that per element (4.5 for nvfp4). A block-scaled type
belongs to the family of its elements (``fp8``, ``fp6``, ``fp4``), whose throughput a hardware
config gives unless it lists the type itself. ``fp6`` and ``fp4`` name those families; as tensor
types they are unscaled elements. Scale-factor layouts padded to the tensor cores' tiles
(CUTLASS's 128 x 4 scale atoms on sm_100) add at most one partial tile per 128 rows, not counted.
"""

from __future__ import annotations

from opmodel.core.enums import StrValueEnum
from opmodel.core.frozen_dict import FrozenDict

__all__ = ["DTYPE_BITS", "DTYPE_SCALE_BLOCK", "DTYPE_STORAGE_BITS", "DType", "nbytes_of"]


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
    MXFP8 = "mxfp8"
    FP6 = "fp6"
    MXFP6 = "mxfp6"
    FP4 = "fp4"
    MXFP4 = "mxfp4"
    NVFP4 = "nvfp4"
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
        """The throughput class: ``fp8`` for the fp8 variants and mxfp8, ``fp6`` for mxfp6,
        ``fp4`` for mxfp4 and nvfp4, the type itself otherwise."""
        return _FAMILY.get(self, self)

    @property
    def scale_block(self) -> int:
        """Elements per 8-bit block scale (32 for the MX types, 16 for nvfp4); 0 when the
        type carries no scales."""
        return DTYPE_SCALE_BLOCK[self]

    @property
    def storage_bits(self) -> float:
        """Bits stored per element, its block scale's share included (4.5 for nvfp4)."""
        return DTYPE_STORAGE_BITS[self]

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
    DType.MXFP8: 8,
    DType.FP6: 6,
    DType.MXFP6: 6,
    DType.FP4: 4,
    DType.MXFP4: 4,
    DType.NVFP4: 4,
    DType.INT64: 64,
    DType.INT32: 32,
    DType.INT8: 8,
    DType.INT4: 4,
}

_FAMILY: dict[DType, DType] = {
    DType.FP8_E4M3: DType.FP8,
    DType.FP8_E5M2: DType.FP8,
    DType.MXFP8: DType.FP8,
    DType.MXFP6: DType.FP6,
    DType.MXFP4: DType.FP4,
    DType.NVFP4: DType.FP4,
}

# OCP Microscaling Formats (MX) v1.0: one E8M0 scale per 32 elements; NVFP4 (NVIDIA, Blackwell
# architecture technical brief; PTX ISA, tcgen05.mma kind::mxf4nvf4 scale_vec::4X): one E4M3
# scale per 16 elements
_SCALE_BLOCK: dict[DType, int] = {
    DType.MXFP8: 32,
    DType.MXFP6: 32,
    DType.MXFP4: 32,
    DType.NVFP4: 16,
}
_SCALE_BITS = 8

# ``DType.bits`` as a read-only mapping: one dict lookup where a hot path would call the property
DTYPE_BITS = FrozenDict(_BITS)
# ``DType.scale_block`` likewise, 0 for the types without scales
DTYPE_SCALE_BLOCK = FrozenDict({d: _SCALE_BLOCK.get(d, 0) for d in _BITS})
# bits stored per element, block scales included: what traffic equations multiply counts by
DTYPE_STORAGE_BITS = FrozenDict(
    {
        d: bits + _SCALE_BITS / _SCALE_BLOCK[d] if d in _SCALE_BLOCK else bits
        for d, bits in _BITS.items()
    }
)


def nbytes_of(num_elements: int, dtype: DType) -> int:
    """Bytes occupied by ``num_elements`` elements: ``ceil(num_elements * bits / 8)``, plus one
    byte per started block of a block-scaled type's ``scale_block`` elements."""
    block = DTYPE_SCALE_BLOCK[dtype]
    scales = -(-num_elements // block) if block else 0
    return (num_elements * _BITS[dtype] + 7) // 8 + scales
