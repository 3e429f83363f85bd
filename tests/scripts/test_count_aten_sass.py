"""scripts/count_aten_sass.py on hand-written SASS listings (no CUDA tools): the full-block
path, the slow paths it skips, the elements a thread handles, and the shipped file's form."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel.models.streaming.counted import COUNTS_FILE, load_counts
from tests.scripts.loader import load_script

count = load_script("count_aten_sass")

# sm_90's form: ``> 0x3ff`` branches to the full-block path; one element's division has a slow
# path (a CALL) that the common case jumps over; a tail path the full CTA never runs
_GT_FORM = """
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   S2R R2, SR_CTAID.X ;
        /*0020*/                   ISETP.GT.AND P0, PT, R5, 0x3ff, PT ;
        /*0030*/              @P0 BRA 0x80 ;
        /*0040*/                   LDG.E.U16 R3, desc[UR4][R8.64] ;
        /*0050*/                   FADD R3, R3, 1 ;
        /*0060*/                   STG.E.U16 desc[UR4][R8.64], R3 ;
        /*0070*/                   EXIT ;
        /*0080*/                   LDG.E.128 R4, desc[UR4][R4.64] ;
        /*0090*/                   MUFU.RCP R3, R11 ;
        /*00a0*/                   FCHK P0, R0, R11 ;
        /*00b0*/              @!P0 BRA 0xe0 ;
        /*00c0*/                   MOV R4, 0xd0 ;
        /*00d0*/                   CALL.REL.NOINC 0x200 ;
        /*00e0*/                   F2FP.BF16.F32.PACK_AB R14, RZ, R14 ;
        /*00f0*/                   STG.E.128 desc[UR4][R2.64], R12 ;
        /*0100*/                   EXIT ;
        /*0110*/                   BRA 0x110;
"""

# sm_100's form: ``>= 0x400`` and ``@!P0`` branching to the partial-block path; a forward
# branch without a CALL (a data-dependent region) is run
_GE_FORM = """
        /*0000*/                   LDC R1, c[0x0][0x37c] ;
        /*0010*/                   ISETP.GE.AND P0, PT, R2, 0x800, PT ;
        /*0020*/             @!P0 BRA 0x90 ;
        /*0030*/                   LDG.E.128 R4, desc[UR4][R4.64] ;
        /*0040*/              @P1 BRA 0x60 ;
        /*0050*/                   FMUL R4, R4, 2 ;
        /*0060*/                   FADD R4, R4, 1 ;
        /*0070*/                   STG.E.128 desc[UR4][R2.64], R4 ;
        /*0080*/                   EXIT ;
        /*0090*/                   EXIT ;
"""


def test_the_full_block_path_skips_the_tail_and_the_slow_path() -> None:
    code = count.parse(_GT_FORM)
    path = [ins.address for ins in count.full_block_path(code)]
    # the four instructions before the branch, then the vector path without MOV and CALL
    assert path == [0x0, 0x10, 0x20, 0x30, 0x80, 0x90, 0xA0, 0xB0, 0xE0, 0xF0, 0x100]
    assert count.elements_per_thread(code) == 8  # 1,024 elements over 128 threads


@pytest.mark.parametrize("opcode", ["ISETP.GE.AND", "ISETP.GE.U32.AND"])
def test_the_greater_or_equal_form_falls_through_to_the_full_block(opcode: str) -> None:
    """Signed or unsigned (PyTorch 2.11's sm_90 code compares the elements left unsigned)."""
    code = count.parse(_GE_FORM.replace("ISETP.GE.AND", opcode))
    path = [ins.address for ins in count.full_block_path(code)]
    assert path == [0x0, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80]
    assert count.elements_per_thread(code) == 16  # 2,048 elements over 128 threads


def test_a_listing_without_exit_on_the_path_is_an_error() -> None:
    code = count.parse(_GE_FORM.replace("EXIT", "NOP"))
    with pytest.raises(ValueError, match="no EXIT"):
        count.full_block_path(code)


def test_the_shipped_counts_are_the_written_form(tmp_path: Path) -> None:
    """What --write produces for the shipped counts reads back to the same table."""
    counts = load_counts(COUNTS_FILE)
    table: dict[str, dict[str, dict[str, float]]] = {}
    for (arch, dtype, function), value in counts.items():
        sm = arch.replace("sm", "sm_")
        table.setdefault(sm, {}).setdefault(dtype, {})[function] = value
    out = tmp_path / "counts.yaml"
    count._write(out, table, Path("torch/lib/libtorch_cuda.so"))
    assert load_counts(out) == counts
    assert out.read_text() == COUNTS_FILE.read_text()


def test_missing_tools_and_files_fail_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert count.main(["--library", str(tmp_path / "none.so")]) == 2
    assert "no such file" in capsys.readouterr().err
    library = tmp_path / "lib.so"
    library.write_bytes(b"")
    assert count.main(["--library", str(library), "--cuobjdump", "no-such-tool-here"]) == 2
    assert "not found on PATH" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # argparse's one-line error, exit status 2
        count.main(["--library", str(library), "--arch", "sm_75"])
    assert "invalid choice: 'sm_75'" in capsys.readouterr().err
