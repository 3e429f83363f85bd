"""Collectives over a TPU's ICI torus (``link_type: ici``), by hand.

tpu_v5p: six links of 100 GB/s each way (600 GB/s per chip); a collective's payload moves at
0.865 of a link's rate, 86.5 GB/s, after a 5 us fixed cost (docs/models/collective.md, "TPUs
over ICI").
"""

from __future__ import annotations

import math

import pytest

from opmodel import ops
from opmodel.core.errors import ConfigError, UnsupportedOpError
from opmodel.hardware import load_hardware
from opmodel.models import get_model

V5P = load_hardware("tpu_v5p")
EFFECTIVE = get_model("effective_roofline")
MIB64 = 64 * 1024 * 1024
RATE = 100e9 * 0.865


def _gather(ranks: int, **attrs: object) -> object:
    return ops.collective("all_gather", MIB64 // 2, ranks, **attrs)  # type: ignore[arg-type]


def test_an_all_gather_around_one_ring() -> None:
    """8 devices on one axis (a ring): each receives 7/8 of 64 MiB over 2 links, 29,360,128 B
    on each: 5 us + 339.4 us. Steps: 7."""
    profile = EFFECTIVE.predict(_gather(8), V5P)
    busiest = 7 / 8 * MIB64 / 2
    assert busiest == 29_360_128
    assert math.isclose(profile.latency_s, 5e-6 + busiest / RATE, rel_tol=1e-9)
    assert profile.implementation == "effective_roofline/ici-ring-1d"
    assert profile.diagnostics.steps == 7
    assert profile.engine == "interconnect"


def test_a_line_takes_twice_a_ring_and_more_axes_less() -> None:
    """Without wraparound the end device receives over one link: twice the ring's transfer.
    Over a 4 x 4 x 4 group the 64 devices receive 63/64 of the buffer over 6 links."""
    ring = EFFECTIVE.predict(_gather(8), V5P).latency_s - 5e-6
    line = EFFECTIVE.predict(_gather(8, wraparound=False), V5P)
    assert line.latency_s - 5e-6 == pytest.approx(2 * ring)
    assert line.implementation == "effective_roofline/ici-line-1d"
    cube = EFFECTIVE.predict(_gather(64, torus_shape=[4, 4, 4]), V5P)
    assert cube.latency_s == pytest.approx(5e-6 + 63 / 64 * MIB64 / 6 / RATE)
    assert cube.diagnostics.steps == 9


def test_a_send_to_a_neighbour_takes_one_link() -> None:
    """ppermute of 64 MiB between neighbours: 5 us + 67,108,864 B at 86.5 GB/s = 780.8 us
    (marin's published v5p figure, 781.98 us, is one of the constants' training rows)."""
    profile = EFFECTIVE.predict(ops.collective("send_recv", MIB64 // 2, 2), V5P)
    assert profile.latency_s == pytest.approx(5e-6 + MIB64 / RATE)
    assert profile.latency_s == pytest.approx(781.98e-6, rel=0.01)


def test_tpu7x_devices_share_their_chips_links() -> None:
    """tpu7x is one TensorCore: half of a chip's 600 GB/s each way, 50 GB/s per link, so the
    same send takes twice v5p's transfer."""
    assert load_hardware("tpu7x").interconnect.link_bandwidth_bytes_per_s == 50e9  # type: ignore[union-attr]
    op = ops.collective("send_recv", MIB64 // 2, 2)
    t7 = EFFECTIVE.predict(op, load_hardware("tpu7x")).latency_s
    assert t7 - 5e-6 == pytest.approx(2 * (EFFECTIVE.predict(op, V5P).latency_s - 5e-6))


def test_roofline_stays_a_lower_bound() -> None:
    """The roofline moves the bus bytes at all six links' rate: below the torus model."""
    for op in (_gather(8), ops.collective("all_to_all", MIB64 // 2, 16, torus_shape=[4, 4])):
        assert (
            get_model("roofline").predict(op, V5P).latency_s < EFFECTIVE.predict(op, V5P).latency_s
        )


@pytest.mark.parametrize(
    ("hardware", "attrs", "message"),
    [
        ("tpu_v5e", {"torus_shape": [2, 2, 2]}, "spans 3 axes; the torus has 2"),
        ("tpu_v5p", {"protocol": "ll"}, "XLA runs the collective"),
        ("tpu_v5p", {"protocol": "simple"}, "XLA runs the collective"),
        ("tpu_v5p", {"ranks_per_node": 4}, "splits the group across ICI domains"),
        ("h100_sxm", {"torus_shape": [8]}, "has link_type nvlink"),
        ("h100_sxm", {"wraparound": False}, "has link_type nvlink"),
    ],
)
def test_misplaced_attrs_are_one_line_errors(
    hardware: str, attrs: dict[str, object], message: str
) -> None:
    with pytest.raises(UnsupportedOpError, match=message) as info:
        EFFECTIVE.predict(_gather(8, **attrs), load_hardware(hardware))
    assert "\n" not in str(info.value)


def test_groups_beyond_one_ici_domain_and_bad_shapes() -> None:
    """NCCL's algorithms, and more torus axes than the torus has, are refused on ICI by every
    model; so are groups beyond one slice."""
    tree = ops.collective("all_reduce", MIB64 // 2, 8, algorithm="tree")
    cube_on_2d = _gather(8, torus_shape=[2, 2, 2])
    for name in ("effective_roofline", "roofline", "extended_roofline"):
        with pytest.raises(UnsupportedOpError, match="XLA runs the collective"):
            get_model(name).predict(tree, V5P)
        with pytest.raises(UnsupportedOpError, match="spans 3 axes; the torus has 2"):
            get_model(name).predict(cube_on_2d, load_hardware("tpu_v5e"))  # type: ignore[arg-type]
    with pytest.raises(UnsupportedOpError, match="exceeds the 256 devices of one tpu_v5e ICI"):
        EFFECTIVE.predict(_gather(512), load_hardware("tpu_v5e"))
    with pytest.raises(Exception, match=r"torus_shape \[4, 4\] must list one to three"):
        _gather(8, torus_shape=[4, 4])


def test_config_rules_of_the_torus() -> None:
    """ICI needs 2 or 3 torus dimensions and takes none of NCCL's rates; NVLink takes no
    torus."""
    with pytest.raises(ConfigError, match="torus_dims: must be 2 or 3"):
        load_hardware("tpu_v5p", overrides={"interconnect.torus_dims": None})
    with pytest.raises(ConfigError, match="nccl_bandwidth_bytes_per_s: not for link_type ici"):
        load_hardware("tpu_v5p", overrides={"interconnect.nccl_bandwidth_bytes_per_s": 5e11})
    with pytest.raises(ConfigError, match="torus_dims: only for link_type ici"):
        load_hardware("h100_sxm", overrides={"interconnect.torus_dims": 3})
