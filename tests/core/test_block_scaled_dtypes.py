"""Block-scaled (microscaling) and sub-byte float types: widths, scale blocks and bytes."""

from __future__ import annotations

import pytest

from opmodel import DType, TensorSpec
from opmodel.core.dtypes import DTYPE_STORAGE_BITS, nbytes_of


@pytest.mark.parametrize(
    ("dtype", "bits", "block", "storage_bits", "family"),
    [
        (DType.MXFP8, 8, 32, 8.25, DType.FP8),
        (DType.MXFP6, 6, 32, 6.25, DType.FP6),
        (DType.MXFP4, 4, 32, 4.25, DType.FP4),
        (DType.NVFP4, 4, 16, 4.5, DType.FP4),
        (DType.FP4, 4, 0, 4, DType.FP4),
        (DType.FP6, 6, 0, 6, DType.FP6),
        (DType.BF16, 16, 0, 16, DType.BF16),
        (DType.FP8_E4M3, 8, 0, 8, DType.FP8),
    ],
)
def test_widths_blocks_and_families(
    dtype: DType, bits: int, block: int, storage_bits: float, family: DType
) -> None:
    """OCP MX v1.0: one 8-bit E8M0 scale per 32 elements; NVFP4: one E4M3 scale per 16."""
    assert (dtype.bits, dtype.scale_block, dtype.family) == (bits, block, family)
    assert dtype.storage_bits == storage_bits == DTYPE_STORAGE_BITS[dtype]
    assert dtype.is_float


@pytest.mark.parametrize(
    ("dtype", "elements", "expected"),
    [
        (DType.NVFP4, 4096, 2048 + 256),  # 4096 x 4 bits, 256 scales of 16
        (DType.MXFP4, 4096, 2048 + 128),  # 128 scales of 32
        (DType.MXFP6, 4096, 3072 + 128),
        (DType.MXFP8, 4096, 4096 + 128),
        (DType.NVFP4, 17, 9 + 2),  # ceil(68 / 8) bytes, two started blocks
        (DType.MXFP4, 1, 1 + 1),
        (DType.FP4, 17, 9),  # no scales
        (DType.FP6, 4, 3),
    ],
)
def test_bytes_count_every_started_scale_block(dtype: DType, elements: int, expected: int) -> None:
    assert nbytes_of(elements, dtype) == expected


def test_a_tensor_spec_counts_its_scales() -> None:
    """An NVFP4 weight of Llama-3-8B's QKV projection: 6144 x 4096 x 4.5 bits."""
    weight = TensorSpec("weight", (6144, 4096), "nvfp4")
    assert weight.nbytes == 6144 * 4096 // 2 + 6144 * 4096 // 16 == 14_155_776


def test_unknown_microscaling_names_get_a_hint() -> None:
    with pytest.raises(ValueError, match=r"did you mean 'nvfp4'\?"):
        TensorSpec("weight", (16, 16), "nvfp5")
