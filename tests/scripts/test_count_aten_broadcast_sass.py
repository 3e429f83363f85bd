"""scripts/count_aten_broadcast_sass.py on a hand-written SASS listing in sm_80's form (no CUDA
tools): each element's path for a given number of dimensions, and the per-dimension step."""

from __future__ import annotations

import pytest

from tests.scripts.loader import load_script

count = load_script("count_aten_broadcast_sass")


def _listing(elements: int, blocks: int, select: bool = False, slow: bool = False) -> str:
    """``elements`` elements, each: its ``idx < N`` test and branch, the ``dims != 0`` test,
    ``blocks`` dimension blocks of 3 instructions and a test-and-branch each, then 4
    instructions of loads, function and store (with ``select``, 6: a test and an ``@!P1``
    branch over the function, as where_kernel_impl's select; with ``slow``, 8: a check, a
    ``@!P1`` branch over a move and a ``CALL`` of the division's slow path)."""
    lines, address = [], 0
    tail = 6 if select else 8 if slow else 4

    def emit(text: str) -> None:
        nonlocal address
        lines.append(f"        /*{address:04x}*/                   {text} ;")
        address += 0x10

    for element in range(elements):
        per_element = 4 + 5 * blocks + tail
        start = address
        after = start + per_element * 0x10  # the next element's test
        epilogue = after - tail * 0x10
        emit("ISETP.GE.AND P0, PT, R0, c[0x0][0x160], PT")
        emit(f"@P0 BRA 0x{after:x}")
        emit("ISETP.NE.AND P0, PT, RZ, c[0x0][0x168], PT")
        emit(f"@!P0 BRA 0x{epilogue:x}")
        for block in range(1, blocks + 1):
            emit("IMAD.HI.U32 R6, R3, c[0x0][0x170], R2")
            emit(f"ISETP.NE.AND P0, PT, R5, 0x{block:x}, PT")
            emit("SHF.R.U32.HI R7, RZ, c[0x0][0x174], R6")
            emit("IMAD R2, R7, c[0x0][0x298], R2")
            emit(f"@!P0 BRA 0x{epilogue:x}")
        emit("LDG.E.U16 R4, [R4.64]")
        if select:
            emit("ISETP.NE.AND P1, PT, R4, R9, PT")
            emit(f"@!P1 BRA 0x{epilogue + 4 * 0x10:x}")
        if slow:
            emit("FCHK P1, R3, R4")
            emit(f"@!P1 BRA 0x{epilogue + 5 * 0x10:x}")
            emit("MOV R12, R3")
            emit("CALL.REL.NOINC 0x4000")
        emit("FADD R3, R3, R4")
        emit("STG.E.U16 [R2.64], R3")
        emit("IADD3 R0, R0, 0x80, RZ")
        assert address == after, element
    emit("EXIT")
    return "\n".join(lines)


def test_element_path_by_dimensions() -> None:
    code = count.parse(_listing(elements=3, blocks=6))
    starts = count.element_starts(code)
    assert len(starts) == 3
    # 4 (tests and branches) + 5 per dimension + 4 (loads, function, store, index)
    for dims in (1, 2, 3):
        assert count.element_path(code, starts[0], starts[1], dims) == 8 + 5 * dims
    assert count.per_dimension(code) == {"element_instructions": 8, "dim_instructions": 5}


def test_a_branch_after_the_dimension_loop_is_not_its_exit() -> None:
    # leaving the loop forgets its block: the select's @!P1 branch after it, at block == dims,
    # is the function's own and falls through (the longer path) instead of being taken
    code = count.parse(_listing(elements=3, blocks=6, select=True))
    starts = count.element_starts(code)
    for dims in (1, 2, 6):
        assert count.element_path(code, starts[0], starts[1], dims) == 10 + 5 * dims


def test_the_slow_path_behind_a_call_is_skipped() -> None:
    # the check's branch over the move and the CALL is taken (the common case); the element
    # test's own branch, over the whole element and its CALL, is not
    code = count.parse(_listing(elements=3, blocks=4, slow=True))
    starts = count.element_starts(code)
    for dims in (1, 2, 4):
        assert count.element_path(code, starts[0], starts[1], dims) == 4 + 5 * dims + 6
    assert count.per_dimension(code) == {"element_instructions": 10, "dim_instructions": 5}


def test_too_few_dimension_blocks_is_an_error() -> None:
    # with 2 blocks, 3 and 4 dimensions run every block: the counts stop growing
    code = count.parse(_listing(elements=2, blocks=2))
    with pytest.raises(ValueError, match="do not grow linearly"):
        count.per_dimension(code)
    with pytest.raises(ValueError, match="at least 2 element tests"):
        count.per_dimension(code[: len(code) // 2 - 1])
