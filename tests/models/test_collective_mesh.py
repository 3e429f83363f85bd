"""Collectives on an xGMI mesh (``link_type: xgmi``) and on the PCIe boards, by hand.

MI300X (mi300x.yaml): 8 GPUs, each with a link to each of its 7 peers, 64 GB/s each way per
link (448 GB/s in all); RCCL moves 48 GB/s a link (336 GB/s). A group of ``g`` ranks of the
node uses the ``g - 1`` links to its peers. RCCL types these links as NCCL's NVLink path, so
the ring's latencies are NCCL's NVLink ones (docs/models/collective.md, "xGMI").
"""

from __future__ import annotations

import math

import pytest

from opmodel import ops
from opmodel.core.errors import ConfigError
from opmodel.hardware import load_hardware
from opmodel.hardware.interconnect import LinkType
from opmodel.models import get_model

MI300X = load_hardware("mi300x")
MIB64 = 64 * 1024 * 1024  # bytes: 32 Mi bf16 elements


def _all_reduce(buffer_bytes: int, ranks: int) -> object:
    return ops.collective("all_reduce", buffer_bytes // 2, ranks)


def test_the_mesh_gives_each_link_its_share() -> None:
    link = MI300X.interconnect
    assert link is not None and link.link_type is LinkType.XGMI
    assert math.isclose(link.link_bandwidth_bytes_per_s, 64e9, rel_tol=1e-12)
    assert [link.group_share(g) for g in (2, 4, 8)] == [1 / 7, 3 / 7, 1.0]
    nvlink = load_hardware("h100_sxm").interconnect
    assert nvlink is not None and nvlink.group_share(2) == 1.0  # a switch: every peer at full rate


def test_roofline_moves_eight_ranks_over_seven_links() -> None:
    """8 ranks send 2 x 7/8 of 64 MiB = 117,440,512 B each over 7 x 64 GB/s: 262.1 us."""
    profile = get_model("roofline").predict(_all_reduce(MIB64, 8), MI300X)
    assert math.isclose(profile.latency_s, 117_440_512 / 448e9, rel_tol=1e-12)


def test_effective_takes_rccls_rate_of_seven_links() -> None:
    """Simple: 8.4 + 14 x 3.4 = 56 us + 117,440,512 B at 336 GB/s (349.5 us) = 405.5 us; LL128
    (36.6 us + 117,440,512 B at 0.92 x 336 GB/s: 416.5 us) is slower."""
    profile = get_model("effective_roofline").predict(_all_reduce(MIB64, 8), MI300X)
    assert profile.implementation == "effective_roofline/nccl-ring-simple"
    assert math.isclose(profile.latency_s, 56e-6 + 117_440_512 / 336e9, rel_tol=1e-9)


def test_two_ranks_share_one_link() -> None:
    """2 ranks: each sends 2 x 1/2 x 64 MiB = 67,108,864 B over its one link to the other, at
    RCCL's 48 GB/s; Simple: 8.4 + 2 x 3.4 = 15.2 us + 1,398.1 us = 1,413.3 us (a switch would
    give them the whole 336 GB/s)."""
    profile = get_model("effective_roofline").predict(_all_reduce(MIB64, 2), MI300X)
    assert math.isclose(profile.latency_s, 15.2e-6 + 67_108_864 / 48e9, rel_tol=1e-9)
    roofline = get_model("roofline").predict(_all_reduce(MIB64, 2), MI300X)
    assert math.isclose(roofline.latency_s, 67_108_864 / 64e9, rel_tol=1e-12)


def test_a_larger_group_on_the_mesh_uses_more_links() -> None:
    """More ranks send more bytes each ((n - 1) / n) over more links: at 64 MiB the links win."""
    model = get_model("effective_roofline")
    times = [model.predict(_all_reduce(MIB64, g), MI300X).latency_s for g in (2, 4, 8)]
    assert times == sorted(times, reverse=True)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"interconnect.devices_per_node": 1}, r"devices_per_node: must be at least 2 for link_type xgmi"),
        ({"interconnect.nvls_bandwidth_bytes_per_s": 1e11}, r"nvls_bandwidth_bytes_per_s: not for link_type xgmi"),
        ({"interconnect.torus_dims": 2}, r"torus_dims: only for link_type ici"),
        ({"interconnect.link_type": "infinity"}, r"link_type: must be one of nvlink, pcie, xgmi, ici"),
    ],
)  # fmt: skip
def test_bad_mesh_configs_are_one_line_errors(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as raised:
        load_hardware("mi300x", overrides=overrides)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("name", "line_rate"),
    [("a40", 32e9), ("l40s", 32e9), ("l4", 32e9), ("h100_pcie", 64e9), ("rtx3090", 32e9),
     ("rtx4090", 32e9)],
)  # fmt: skip
def test_pcie_boards_run_nccls_pcie_ring(name: str, line_rate: float) -> None:
    """8 ranks, 64 MiB, no measured NCCL rate: Simple's 8.4 + 14 x 5.7 = 88.2 us of PCIe steps
    and 117,440,512 B at 370/450 of the line rate."""
    hardware = load_hardware(name)
    link = hardware.interconnect
    assert link is not None and link.link_type is LinkType.PCIE
    profile = get_model("effective_roofline").predict(_all_reduce(MIB64, 8), hardware)
    expected = 88.2e-6 + 117_440_512 / (line_rate * 370 / 450)
    assert math.isclose(profile.latency_s, expected, rel_tol=1e-9)
