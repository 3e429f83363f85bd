"""opmodel.formulas.ici: the busiest ICI link's bytes, derived by hand."""

from __future__ import annotations

import pytest

from opmodel.formulas.ici import axis_links, ici_link_bytes, ici_steps

S = 1_200_000  # bytes: divisible by every group size below


def test_links_per_axis() -> None:
    """A ring of three or more has a neighbour each way; a line, or an axis of 2 (both
    neighbours the same device), has one link to use."""
    assert axis_links(4, wraparound=True) == 2
    assert axis_links(3, wraparound=True) == 2
    assert axis_links(2, wraparound=True) == 1
    assert axis_links(4, wraparound=False) == 1


def test_gathers_spread_over_every_link_of_the_group() -> None:
    """A device receives (n - 1) / n of S over its links: a ring of 4 has 2 (3/8 S), a line of 4
    has 1 (3/4 S: twice the ring), a 4 x 4 torus 4 (15/64 S), a 2 x 2 group 2 (3/8 S);
    reduce-scatter moves what all-gather does, all-reduce twice that."""
    assert ici_link_bytes("all_gather", [4], True, S) == pytest.approx(3 / 4 * S / 2)
    assert ici_link_bytes("all_gather", [4], False, S) == pytest.approx(3 / 4 * S)
    assert ici_link_bytes("all_gather", [4, 4], True, S) == pytest.approx(15 / 16 * S / 4)
    assert ici_link_bytes("all_gather", [2, 2], True, S) == pytest.approx(3 / 4 * S / 2)
    assert ici_link_bytes("reduce_scatter", [8], True, S) == pytest.approx(7 / 8 * S / 2)
    assert ici_link_bytes("all_reduce", [8], True, S) == pytest.approx(2 * 7 / 8 * S / 2)


def test_broadcast_send_and_all_to_all() -> None:
    """Broadcast: S over the root's links (a 4 x 4 torus: S / 4). A send: S over one link.
    All-to-all, S / n to each peer: a ring of 4 sends 1 + 2 + 1 = 4 hop-chunks of S / 4 from
    each of 4 devices over 8 directed links, S / 2 per link; a ring of 3, S / 3; a line of 4
    passes 2 x 2 chunks of S / 4 through its middle link, S; an axis of 2, S / 2; a 4 x 3 torus
    takes its busier axis, S / 2."""
    assert ici_link_bytes("broadcast", [4, 4], True, S) == pytest.approx(S / 4)
    assert ici_link_bytes("send_recv", [2], True, S) == S
    assert ici_link_bytes("all_to_all", [4], True, S) == pytest.approx(S / 2)
    assert ici_link_bytes("all_to_all", [3], True, S) == pytest.approx(S / 3)
    assert ici_link_bytes("all_to_all", [4], False, S) == pytest.approx(S)
    assert ici_link_bytes("all_to_all", [2], True, S) == pytest.approx(S / 2)
    assert ici_link_bytes("all_to_all", [4, 3], True, S) == pytest.approx(S / 2)


def test_steps() -> None:
    """One ring or line per axis in turn: 3 + 7 = 10 steps over [4, 8], 20 for an all-reduce;
    all-to-all and a send go at once."""
    assert ici_steps("all_gather", [4, 8]) == 10
    assert ici_steps("all_reduce", [4, 8]) == 20
    assert ici_steps("all_to_all", [4, 8]) == 1
    assert ici_steps("send_recv", [2]) == 1
