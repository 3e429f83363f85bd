"""Collectives (``OpKind.COLLECTIVE``): one rank's bytes, steps and times by hand.

H100 SXM: NVLink 450 GB/s each way; NCCL's Simple protocol 370 GB/s of it; LL a quarter of
that for all-reduce; ring latencies from NCCL's tuning model (docs/models/collective.md).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opmodel import OpValidationError, ops
from opmodel.core.errors import ConfigError, UnsupportedOpError
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from tests.hypothesis_budget import examples

H100 = load_hardware("h100_sxm")
MIB64 = 64 * 1024 * 1024  # bytes; 32 Mi bf16 elements


def _all_reduce(buffer_bytes: int, ranks: int = 8, **attrs: object) -> object:
    return ops.collective("all_reduce", buffer_bytes // 2, ranks, **attrs)  # type: ignore[arg-type]


def test_roofline_moves_the_bus_bytes_at_the_line_rate() -> None:
    """8 ranks send 2 x 7/8 of 64 MiB = 117,440,512 B each: 261 us at 450 GB/s; HBM reads the
    buffer and the staged received bytes, and writes as many."""
    profile = get_model("roofline").predict(_all_reduce(MIB64), H100)
    sent = 2 * 7 * MIB64 // 8
    assert sent == 117_440_512
    assert math.isclose(profile.latency_s, sent / 450e9, rel_tol=1e-12)
    assert profile.traffic["interconnect"].write_bytes == sent
    assert profile.traffic["hbm"].read_bytes == MIB64 + sent
    assert profile.flops == (MIB64 // 2) * 7 // 8  # (n - 1) / n of the elements added
    assert math.isclose(profile.energy.memory_j["interconnect"], sent * 1.04e-11, rel_tol=1e-12)
    assert profile.engine == "interconnect" and profile.diagnostics.bound == "interconnect"


def test_effective_takes_simple_for_a_large_buffer() -> None:
    """The ring: Simple: 8.4 + 14 x 3.4 = 56 us of latency + 117,440,512 B at 370 GB/s (317.4
    us) = 373.4 us; LL128 (10 + 14 x 1.9 = 36.6 us + 340.4 GB/s: 381.6 us) and LL (1.28 ms)
    are slower."""
    profile = get_model("effective_roofline").predict(_all_reduce(MIB64, algorithm="ring"), H100)
    assert profile.implementation == "effective_roofline/nccl-ring-simple"
    assert math.isclose(profile.latency_s, 56e-6 + 117_440_512 / 370e9, rel_tol=1e-9)
    assert profile.diagnostics.steps == 14


def test_effective_takes_ll_for_a_small_buffer() -> None:
    """2 KiB: LL's 3.6 + 14 x 0.47 = 10.18 us + 3,584 B at 92.5 GB/s (0.04 us) = 10.22 us."""
    profile = get_model("effective_roofline").predict(_all_reduce(2048), H100)
    assert profile.diagnostics.protocol == "ll"
    assert math.isclose(profile.latency_s, 10.18e-6 + 3584 / 92.5e9, rel_tol=1e-9)


def test_a_pinned_protocol_is_used() -> None:
    """protocol: ll on 64 MiB: 10.18 us + 117,440,512 B at 92.5 GB/s = 1.2798 ms."""
    profile = get_model("effective_roofline").predict(_all_reduce(MIB64, protocol="ll"), H100)
    assert math.isclose(profile.latency_s, 10.18e-6 + 117_440_512 / 92.5e9, rel_tol=1e-9)


@pytest.mark.parametrize(
    ("operation", "sent"),
    [  # 8 ranks, a 64 MiB buffer (all_gather's output, reduce_scatter's input)
        ("all_gather", 7 * MIB64 // 8),
        ("reduce_scatter", 7 * MIB64 // 8),
        ("all_to_all", 7 * MIB64 // 8),
        ("broadcast", MIB64),
        ("send_recv", MIB64),
    ],
)
def test_bus_bytes_of_every_operation(operation: str, sent: int) -> None:
    ranks = 2 if operation == "send_recv" else 8
    op = ops.collective(operation, MIB64 // 2, ranks)
    profile = get_model("roofline").predict(op, H100)
    assert profile.diagnostics.link_bytes == sent
    staged = 0 if operation == "send_recv" else sent  # a send lands in place
    view = op.view
    assert profile.traffic["hbm"].read_bytes == view.send.nbytes + staged  # type: ignore[union-attr]


def test_more_ranks_take_longer() -> None:
    model = get_model("effective_roofline")
    times = [model.predict(_all_reduce(MIB64, ranks), H100).latency_s for ranks in (2, 4, 8)]
    assert times == sorted(times)


def test_hardware_without_links_is_a_one_line_error() -> None:
    with pytest.raises(UnsupportedOpError, match="hardware 'mi355x' has no interconnect section"):
        get_model("effective_roofline").predict(_all_reduce(MIB64), load_hardware("mi355x"))


def test_a_group_across_nodes_needs_the_network() -> None:
    """a100_40gb_pcie gives its node's PCIe links and no NICs (docs/hardware.md)."""
    pcie = load_hardware("a100_40gb_pcie")
    with pytest.raises(UnsupportedOpError, match=r"spans 2 nodes .* no interconnect\.network"):
        get_model("roofline").predict(_all_reduce(MIB64, ranks=16), pcie)


def test_bad_ops_are_one_line_errors() -> None:
    with pytest.raises(OpValidationError, match="operation must be one of"):
        ops.collective("allreduce", 1024, 8)
    with pytest.raises(OpValidationError, match="multiple of ranks"):
        ops.collective("all_gather", 1001, 8)
    with pytest.raises(OpValidationError, match="ranks"):
        ops.collective("all_reduce", 1024, 1)
    with pytest.raises(OpValidationError, match="send_recv is between 2 ranks"):
        ops.collective("send_recv", 1024, 4)


def test_a_measured_bulk_rate_replaces_the_line_rate_share() -> None:
    """a100_80gb_sxm carries NCCL's measured 195 GB/s: 8 ranks, 64 MiB, Simple: 56 us +
    117,440,512 B at 195 GB/s = 658.3 us; without it 370/450 of 300 GB/s, 246.7 GB/s."""
    a100 = load_hardware("a100_80gb_sxm")
    profile = get_model("effective_roofline").predict(_all_reduce(MIB64), a100)
    assert math.isclose(profile.latency_s, 56e-6 + 117_440_512 / 195e9, rel_tol=1e-9)
    line_share = load_hardware(
        "a100_80gb_sxm", overrides={"interconnect.nccl_bandwidth_bytes_per_s": None}
    )
    profile = get_model("effective_roofline").predict(_all_reduce(MIB64), line_share)
    assert math.isclose(profile.latency_s, 56e-6 + 117_440_512 / (300e9 * 370 / 450), rel_tol=1e-9)


def test_a_bulk_rate_above_the_line_rate_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="nccl_bandwidth_bytes_per_s: must not exceed"):
        load_hardware("h100_sxm", overrides={"interconnect.nccl_bandwidth_bytes_per_s": 5e11})


@settings(max_examples=examples(40), deadline=None)
@given(
    operation=st.sampled_from(["all_reduce", "all_gather", "reduce_scatter", "all_to_all"]),
    shards=st.integers(1, 1 << 22),
    model=st.sampled_from(["roofline", "effective_roofline"]),
)
def test_more_ranks_never_take_less_time(operation: str, shards: int, model: str) -> None:
    """On one buffer of 840 x ``shards`` elements (divisible by 2-8 ranks), a larger group
    sends more bytes per rank ((n - 1) / n grows) over more ring steps: never faster."""
    times = [
        get_model(model).predict(ops.collective(operation, 840 * shards, n), H100).latency_s
        for n in range(2, 9)
    ]
    assert times == sorted(times)
