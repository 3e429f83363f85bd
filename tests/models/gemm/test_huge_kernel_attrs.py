"""Kernel attrs far past what a CTA holds are refused at once: no search loops over them."""

from __future__ import annotations

import pytest

from opmodel import DType, InvalidKernelError
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.models.gemm.warp_grid import warp_tile_for

from ...conftest import gemm


def test_a_warp_count_past_the_mma_tiles_has_no_warp_tile() -> None:
    # a 128 x 128 tile holds 8 x 16 m16n8 MMA tiles: no grid of 2^62 warps fits
    assert warp_tile_for(128, 128, 2**62, (16, 8, 16)) is None
    assert warp_tile_for(128, 128, 128, (16, 8, 16)) == (16, 8)


@pytest.mark.parametrize("model", ["extended_roofline", "effective_roofline"])
def test_huge_warps_per_cta_is_a_kernel_error(model: str) -> None:
    """2^40 warps per CTA: one line from the thread check; the warp grid used to be searched
    one candidate per warp, 2^40 steps."""
    op = gemm(1024, 1024, 1024, DType.BF16, warps_per_cta=2**40)
    with pytest.raises(InvalidKernelError, match="warps_per_cta=1099511627776"):
        get_model(model).predict(op, load_hardware("a100_80gb_sxm"))
