"""scripts/warp_critical_path.py without CUDA tools: control bits decoded from the high word of
an instruction's encoding, and the replay of hand-built listings whose round trips and other
cycles are derived by hand."""

from __future__ import annotations

from tests.scripts.loader import load_script

path_script = load_script("warp_critical_path")

NONE = 7


def _high(stall: int, write: int = NONE, read: int = NONE, wait: int = 0) -> int:
    """A high word holding these control bits (bits 41-62: stall, yield, wb, rb, wait)."""
    return (stall | write << 5 | read << 8 | wait << 11) << 41


def _listing(*instructions: tuple[str, int]) -> str:
    lines = []
    for i, (text, high) in enumerate(instructions):
        lines.append(f"        /*{16 * i:04x}*/                   {text} ;   /* 0x{0:016x} */")
        lines.append(
            f"                                                         /* 0x{high:016x} */"
        )
    return "\n".join(lines)


def test_control_bits_decode() -> None:
    # cuobjdump's high word of an LDG: stall 4, yield, scoreboard 2 on write, no read barrier
    bits = path_script.Control.decode(0x000EA8000C1E9500)
    assert (bits.stall, bits.write_barrier, bits.read_barrier, bits.wait_mask) == (4, 2, 7, 0)
    assert path_script.Control.decode(_high(3, 1, 5, 0b100001)) == path_script.Control(
        3, 1, 5, 0b100001
    )


def test_one_load_then_its_use() -> None:
    """LDG issues at 0 (stall 1); FADD waits for its scoreboard: issues at L, stalls 4; EXIT at
    L + 4, done at L + 5: one round trip, 5 other cycles, 3 instructions."""
    listing = _listing(
        ("LDG.E R2, desc[UR4][R2.64]", _high(1, write=0)),
        ("FADD R3, R2, R2", _high(4, wait=0b1)),
        ("EXIT", _high(1)),
    )
    assert path_script.critical_path(listing) == (1.0, 5.0, 3)


def test_loads_in_flight_share_a_round_trip_and_dependent_loads_do_not() -> None:
    together = _listing(
        ("LDG.E R2, desc[UR4][R2.64]", _high(1, write=0)),
        ("LDG.E R4, desc[UR4][R4.64]", _high(1, write=1)),
        ("FADD R3, R2, R4", _high(1, wait=0b11)),
        ("EXIT", _high(1)),
    )
    # the second load issues at 1, so the add waits until L + 1
    assert path_script.critical_path(together) == (1.0, 3.0, 4)
    chained = _listing(
        ("LDG.E R2, desc[UR4][R2.64]", _high(1, write=0)),
        ("LDG.E R4, desc[UR4][R2.64]", _high(1, write=1, wait=0b1)),
        ("FADD R3, R4, R4", _high(1, wait=0b10)),
        ("EXIT", _high(1)),
    )
    assert path_script.critical_path(chained) == (2.0, 2.0, 4)


def test_a_shuffle_and_a_store_take_their_own_latencies() -> None:
    """A shuffle releases its scoreboard after 30 cycles, whatever the load latency; a store's
    read barrier after 10: neither adds a round trip."""
    listing = _listing(
        ("SHFL.BFLY PT, R3, R2, 0x10, 0x1f", _high(1, write=0)),
        ("FADD R3, R3, R2", _high(1, wait=0b1)),
        ("STG.E desc[UR4][R4.64], R3", _high(1, read=1)),
        ("EXIT", _high(1)),
    )
    trips, other, length = path_script.critical_path(listing)
    # the add at 30, the store at 31, EXIT at 32 and done at 33; the store's operands read at 41
    assert (trips, other, length) == (0.0, 41.0, 4)
