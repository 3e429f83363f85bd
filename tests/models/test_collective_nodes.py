"""Collectives across nodes: NCCL's ring and tree through the NICs, by hand.

a100_80gb_sxm is a DGX A100: 8 GPUs per node, NCCL's 195 GB/s over NVLink, one 200 Gb/s HDR
NIC per GPU moving NCCL's 24 GB/s; h100_sxm: 370 GB/s over NVLink, one 400 Gb/s NDR NIC per GPU
at 48 GB/s. Latencies are NCCL's tuning model (docs/models/collective.md, "Groups across
nodes").
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

A100 = load_hardware("a100_80gb_sxm")
H100 = load_hardware("h100_sxm")
MIB64 = 64 * 1024 * 1024  # bytes
EFFECTIVE, ROOFLINE = get_model("effective_roofline"), get_model("roofline")


def _op(operation: str, buffer_bytes: int, ranks: int, **attrs: object) -> object:
    return ops.collective(operation, buffer_bytes // 2, ranks, **attrs)  # type: ignore[arg-type]


def test_roofline_takes_the_slower_of_the_node_links_and_the_nics() -> None:
    """16 ranks on 2 nodes, 64 MiB: each sends 2 x 15/16 x 64 MiB = 125,829,120 B, 1/8 of it
    (15,728,640 B) through its NIC at 25 GB/s (629.1 us), 7/8 over NVLink at 300 GB/s (367 us)."""
    profile = ROOFLINE.predict(_op("all_reduce", MIB64, 16), A100)
    assert math.isclose(profile.latency_s, 15_728_640 / 25e9, rel_tol=1e-9)
    assert profile.traffic["network"].write_bytes == 15_728_640
    assert profile.traffic["interconnect"].write_bytes == 110_100_480
    assert math.isclose(profile.energy.memory_j["network"], 15_728_640 * 4.0e-10, rel_tol=1e-9)
    assert profile.diagnostics.nodes == 2
    assert profile.diagnostics.ranks_per_node == 8


def test_the_ring_across_nodes_by_hand() -> None:
    """Simple ring: 30 steps, 2 through the network: 8.4 + 28 x 3.4 + 2 x 9.6 = 122.8 us,
    x 1.9 (NCCL's plateau, S >= 16/16 x 64 KiB) = 233.32 us; the NICs' 15,728,640 B at 24 GB/s
    (655.36 us) outlast NVLink's 110,100,480 B at 195 GB/s (564.6 us)."""
    profile = EFFECTIVE.predict(
        _op("all_reduce", MIB64, 16, protocol="simple", algorithm="ring"), A100
    )
    assert math.isclose(profile.latency_s, 233.32e-6 + 655.36e-6, rel_tol=1e-9)
    assert profile.implementation == "effective_roofline/nccl-ring-simple"


def test_the_tree_across_nodes_by_hand() -> None:
    """Simple tree, 2 nodes of 8: 2 x (7 x 28 + 1 x 50) = 492 us. Each rank sends 2 S =
    134,217,728 B along its node's chain at 195 GB/s (688.3 us); the two trees' one edge
    carries S / 2 each way, S through a node's 8 NICs at 24 GB/s (349.5 us); / (0.9 x NCCL's
    correction 0.8 at 2^20 x 64 B) = 956.0 us."""
    profile = EFFECTIVE.predict(
        _op("all_reduce", MIB64, 16, protocol="simple", algorithm="tree"), A100
    )
    transfer = 2 * MIB64 / 195e9 / (0.9 * 0.8)
    assert math.isclose(profile.latency_s, 492e-6 + transfer, rel_tol=1e-9)
    assert profile.implementation == "effective_roofline/nccl-tree-simple"
    assert profile.diagnostics.algorithm == "tree"
    assert profile.diagnostics.steps == 2 * (7 + 1)  # the node's chain and one tree level


def test_one_rank_per_node_tree_and_ring_send_the_same_nic_bytes() -> None:
    """One rank per node, 8 GiB: the ring sends 2 (N - 1) / N x S through each NIC, the two
    trees' N - 1 edges as much on average, so only NCCL's 0.9 tree share parts them."""
    for nodes in (2, 16):
        ring, tree = (
            EFFECTIVE.predict(
                _op("all_reduce", 8 << 30, nodes, ranks_per_node=1, algorithm=a, protocol="simple"),
                H100,
            )
            for a in ("ring", "tree")
        )
        assert ring.latency_s < tree.latency_s < ring.latency_s / 0.85


def test_ll_pays_nccls_penalty_on_its_node_steps() -> None:
    """LL ring, 2 KiB over 16 ranks: 3.6 + 28 x 0.47 x 1.8 + 2 x 2.7 = 32.688 us; 3,840 B,
    480 of them through the NIC at a quarter of 24 GB/s (80 ns)."""
    profile = EFFECTIVE.predict(_op("all_reduce", 2048, 16, protocol="ll", algorithm="ring"), A100)
    assert math.isclose(profile.latency_s, 32.688e-6 + 80e-9, rel_tol=1e-9)


def test_one_rank_per_node_sends_everything_through_its_nic() -> None:
    """16 nodes of 1 (a data-parallel group): LL128, 30 network steps: 10 + 30 x 4 = 130 us;
    125,829,120 B at 24 GB/s x 0.7 (NCCL's LL128 share at one rank per node)."""
    op = _op("all_reduce", MIB64, 16, ranks_per_node=1, protocol="ll128", algorithm="ring")
    profile = EFFECTIVE.predict(op, A100)
    assert math.isclose(profile.latency_s, 130e-6 + 125_829_120 / (24e9 * 0.7), rel_tol=1e-9)
    assert profile.traffic["network"].write_bytes == 125_829_120
    assert profile.traffic["interconnect"].write_bytes == 0


def test_all_to_all_uses_one_nic_per_rank() -> None:
    """16 ranks on 2 H100 nodes, 64 MiB: S/16 to each peer, 8 of them in the other node:
    33,554,432 B through the rank's NIC at 48 GB/s (699.05 us), 29,360,128 B over NVLink;
    Simple: 8.4 + 9.6 us ("Alltoall cannot aggregate the bandwidth of multiple NICs", NCCL's
    maintainer, NVIDIA/nccl-tests issue #267)."""
    profile = EFFECTIVE.predict(_op("all_to_all", MIB64, 16), H100)
    assert math.isclose(profile.latency_s, 18e-6 + 33_554_432 / 48e9, rel_tol=1e-9)
    assert profile.diagnostics.network_bytes == 33_554_432


def test_auto_takes_the_tree_for_small_buffers_over_many_nodes() -> None:
    """At 2 KiB over 64 nodes the ring's 1,022 steps cost hundreds of microseconds; the tree's
    log2(64) = 6 network hops a few tens."""
    profile = EFFECTIVE.predict(_op("all_reduce", 2048, 512), H100)
    assert profile.diagnostics.algorithm == "tree"
    assert profile.latency_s < 100e-6


def test_inside_one_node_nothing_changes() -> None:
    implicit = EFFECTIVE.predict(_op("all_reduce", MIB64, 8), H100)
    explicit = EFFECTIVE.predict(_op("all_reduce", MIB64, 8, ranks_per_node=8), H100)
    assert implicit.latency_s == explicit.latency_s
    assert "network" not in implicit.traffic
    assert implicit.diagnostics.nodes == 1


def test_placement_errors_are_one_line() -> None:
    with pytest.raises(OpValidationError, match=r"ranks_per_node 3 must divide attrs\.ranks 16"):
        _op("all_reduce", MIB64, 16, ranks_per_node=3)
    with pytest.raises(UnsupportedOpError, match=r"ranks_per_node 16 exceeds the 8 devices"):
        EFFECTIVE.predict(_op("all_reduce", MIB64, 32, ranks_per_node=16), H100)
    with pytest.raises(UnsupportedOpError, match=r"ranks 12 does not fill nodes of 8 devices"):
        EFFECTIVE.predict(_op("all_reduce", MIB64, 12), H100)
    with pytest.raises(OpValidationError, match=r"algorithm tree .* runs all_reduce"):
        _op("all_gather", MIB64, 16, algorithm="tree")
    with pytest.raises(UnsupportedOpError, match="algorithm tree runs across nodes"):
        EFFECTIVE.predict(_op("all_reduce", MIB64, 8, algorithm="tree"), H100)
    with pytest.raises(OpValidationError, match=r"nvls .* inside one node"):
        _op("all_reduce", MIB64, 16, ranks_per_node=8, algorithm="nvls")
    with pytest.raises(ConfigError, match=r"network\.nccl_bandwidth_bytes_per_s: must not exceed"):
        load_hardware(
            "h100_sxm", overrides={"interconnect.network.nccl_bandwidth_bytes_per_s": 6e10}
        )


@settings(max_examples=examples(30), deadline=None)
@given(
    operation=st.sampled_from(["all_reduce", "all_gather", "reduce_scatter", "all_to_all"]),
    kib=st.integers(1, 1 << 20),
    per_node=st.sampled_from([1, 2, 8]),
    model=st.sampled_from(["roofline", "effective_roofline"]),
)
def test_more_nodes_never_take_less_time(
    operation: str, kib: int, per_node: int, model: str
) -> None:
    times = [
        get_model(model)
        .predict(_op(operation, kib * 1024 * 64, per_node * nodes, ranks_per_node=per_node), H100)
        .latency_s
        for nodes in (2, 4, 16, 64)
    ]
    assert times == sorted(times)


@settings(max_examples=examples(30), deadline=None)
@given(
    operation=st.sampled_from(["all_reduce", "all_gather", "reduce_scatter", "all_to_all"]),
    kib=st.integers(1, 1 << 20),
    model=st.sampled_from(["roofline", "effective_roofline"]),
)
def test_more_nics_never_take_more_time(operation: str, kib: int, model: str) -> None:
    op = _op(operation, kib * 1024 * 64, 32)
    times = [
        get_model(model)
        .predict(op, load_hardware("h100_sxm", overrides={"interconnect.network.nics_per_node": k}))
        .latency_s
        for k in (8, 4, 2)
    ]
    assert times == sorted(times)
