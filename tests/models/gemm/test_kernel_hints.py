"""An illegal kernel's error names what the user wrote: a warp tile the op does not give was
derived from its CTA tile, and the message says so and how to fix it."""

from __future__ import annotations

import pytest

from opmodel import InvalidKernelError
from opmodel.hardware import load_hardware
from opmodel.models import get_model

from ...conftest import gemm

_DERIVED = (
    "warp_tile_m=24 is not a multiple of the MMA m=16 (warp_tile_m not given, derived from "
    "cta_tile_m: make cta_tile_m a multiple of the MMA m or give warp_tile_m)"
)


@pytest.mark.parametrize("model", ["effective_roofline", "extended_roofline"])
def test_derived_warp_tile_is_named_as_derived(model: str) -> None:
    # the default warp tile is min(64, cta_tile_m) = 24, which no m16 MMA tiles
    with pytest.raises(InvalidKernelError) as info:
        get_model(model).predict(
            gemm(4096, 4096, 4096, cta_tile_m=24), load_hardware("a100_80gb_sxm")
        )
    assert str(info.value) == f"op 'gemm' (gemm): kernel: {_DERIVED}"


def test_given_warp_tile_keeps_the_plain_message() -> None:
    op = gemm(4096, 4096, 4096, cta_tile_m=48, warp_tile_m=24)
    with pytest.raises(InvalidKernelError) as info:
        get_model("extended_roofline").predict(op, load_hardware("a100_80gb_sxm"))
    assert str(info.value) == (
        "op 'gemm' (gemm): kernel: warp_tile_m=24 is not a multiple of the MMA m=16"
    )


def test_a_warp_count_is_named_among_what_the_warp_tile_came_from() -> None:
    op = gemm(4096, 4096, 4096, cta_tile_m=40, warps_per_cta=2)  # 40 rows: no m16 tiling
    with pytest.raises(InvalidKernelError, match="derived from cta_tile_m and warps_per_cta: "):
        get_model("extended_roofline").predict(op, load_hardware("a100_80gb_sxm"))
