"""scripts/count_layer_norm_sass.py on a hand-written SASS listing shaped like ATen's layer
norm kernel (no CUDA tools): the path warp 0 takes, its loops, the pipes and the shipped
file's form."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel.models.streaming.counted import LAYER_NORM_FILE, load_layer_norm_counts
from tests.scripts.loader import load_script

count = load_script("count_layer_norm_sass")

# prologue (2); a Welford loop (0x20-0x80) with a reciprocal whose slow path (MOV, CALL) is
# jumped over; a region of six behind a count test, which the common case runs; an if/else
# whose longer arm is the reduction across warps, with a loop of no memory access (run twice
# for 4 warps); a branch on two predicates to the variant with weight and bias and its
# normalise loop; a predicated EXIT, then thread 0's stores and the final EXIT
_KERNEL = """
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   S2R R0, SR_TID.X ;
        /*0020*/                   LDG.E.64.CONSTANT R8, desc[UR4][R2.64] ;
        /*0030*/                   FADD R4, R4, 1 ;
        /*0040*/              @P0 BRA 0x70 ;
        /*0050*/                   MOV R8, 0x60 ;
        /*0060*/                   CALL.REL.NOINC 0x300 ;
        /*0070*/                   MUFU.RCP R5, R4 ;
        /*0080*/             @!P4 BRA 0x20 ;
        /*0090*/             @!P0 BRA 0x100 ;
        /*00a0*/                   IADD3 R6, R6, 1, RZ ;
        /*00b0*/                   LOP3.LUT R6, R6, 0x7f800000, RZ, 0xc0, !PT ;
        /*00c0*/                   ISETP.GT.U32.AND P0, PT, R6, 0x1ffffff, PT ;
        /*00d0*/                   FMUL R7, R7, R5 ;
        /*00e0*/                   MOV R8, 0xf0 ;
        /*00f0*/                   CALL.REL.NOINC 0x300 ;
        /*0100*/              @P0 BRA 0x130 ;
        /*0110*/                   SHFL.IDX PT, R7, R7, RZ, 0x1f ;
        /*0120*/                   BRA 0x180 ;
        /*0130*/                   STS [R2], R7 ;
        /*0140*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0150*/                   LDS R7, [R2] ;
        /*0160*/                   FFMA R7, R7, R5, R4 ;
        /*0170*/              @P1 BRA 0x130 ;
        /*0180*/              @P0 BRA P1, 0x1d0 ;
        /*0190*/                   LDG.E.64.CONSTANT R8, desc[UR4][R2.64] ;
        /*01a0*/                   STG.E.64 desc[UR4][R2.64], R8 ;
        /*01b0*/             @!P0 BRA 0x190 ;
        /*01c0*/                   BRA 0x220 ;
        /*01d0*/                   LDG.E.64.CONSTANT R8, desc[UR4][R2.64] ;
        /*01e0*/                   LDG.E.U16 R10, desc[UR4][R4.64] ;
        /*01f0*/                   FFMA R8, R8, R10, R11 ;
        /*0200*/                   STG.E.64 desc[UR4][R2.64], R8 ;
        /*0210*/             @!P0 BRA 0x1d0 ;
        /*0220*/              @P2 EXIT ;
        /*0230*/                   STG.E desc[UR4][R6.64], R7 ;
        /*0240*/                   EXIT ;
        /*0300*/                   RET.REL.NODEC R8 0x0 ;
"""


def test_warp_zeros_path_and_its_loops() -> None:
    code = count.parse(_KERNEL)
    path, loops = count.walk(code)
    addresses = [ins.address for ins in path]
    # the slow path (0x50-0x60) skipped; the count test's region (0xa0-0xf0) run; the
    # one-warp arm (0x110-0x120) skipped; the cross-warp loop twice; the weight-and-bias
    # variant, not the plain one (0x190-0x1c0)
    cross_warp = [0x130, 0x140, 0x150, 0x160, 0x170]
    assert addresses == [
        0x0, 0x10, 0x20, 0x30, 0x40, 0x70, 0x80, 0x90, 0xA0, 0xB0, 0xC0, 0xD0, 0xE0, 0xF0,
        0x100, *cross_warp, *cross_warp, 0x180, 0x1D0, 0x1E0, 0x1F0, 0x200, 0x210, 0x220,
        0x230, 0x240,
    ]  # fmt: skip
    assert [(code[a].address, code[b].address) for a, b in loops] == [(0x20, 0x80), (0x1D0, 0x210)]


def test_counts_per_element_and_per_row() -> None:
    """Welford: 5 instructions over the 4 elements of one vector load; normalise: 5 over the
    4 of one vector store (the half-word weight load is not the input); per row: the 34
    instructions of the path less the two loops' 10."""
    counts = count.count_kernel(count.parse(_KERNEL), "sm_90")
    assert counts["instructions_per_element"] == 10 / 4
    assert counts["row_instructions"] == 34 - 10
    # the Welford loop's reciprocal holds the special-function unit 8 clocks (16 lanes per SM),
    # more than its 5 issue slots; the normalise loop's 5 instructions issue one per clock
    assert counts["cycles_per_element"] == (8 + 5) / 4


@pytest.mark.parametrize(
    ("arch", "cycles"),
    # 4 FFMA and 2 IMAD: the fma pipe takes (4 + 2) / 0.5 = 12 cycles on sm_80, where the
    # issue slot needs 6; on sm_90 FP32 runs at one per clock and IMAD's 2 / 0.5 = 4 fit in 6
    [("sm_80", 12.0), ("sm_90", 6.0)],
)
def test_the_busiest_pipe_binds(arch: str, cycles: float) -> None:
    body = "\n".join(
        f"/*{16 * i:04x}*/ {op} R1, R2, R3, R4 ;"
        for i, op in enumerate(["FFMA", "FFMA", "FFMA", "FFMA", "IMAD", "IMAD.MOV.U32"])
    )
    assert count.issue_cycles(count.parse(body), arch) == cycles


def test_the_special_function_unit_binds_at_an_eighth() -> None:
    body = "/*0000*/ MUFU.RCP R1, R2 ;\n/*0010*/ FADD R1, R1, R2 ;"
    assert count.issue_cycles(count.parse(body), "sm_90") == 8.0  # 16 per SM per clock


def test_a_kernel_without_a_normalise_loop_is_an_error() -> None:
    code = count.parse(_KERNEL.replace("STG.E.64", "NOP"))
    with pytest.raises(SystemExit, match="expected a Welford and a normalise loop"):
        count.count_kernel(code, "sm_90")


def test_the_shipped_counts_are_the_written_form(tmp_path: Path) -> None:
    """What --write produces for the shipped counts reads back to the same table."""
    shipped = load_layer_norm_counts(LAYER_NORM_FILE)
    table: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    for (kernel, arch, dtype), value in shipped.items():
        by_kernel = table.setdefault(f"sm_{arch[2:]}", {"layer_norm": {}, "rms_norm": {}})
        by_kernel[kernel][dtype] = {
            "instructions_per_element": value.instructions_per_element,
            "cycles_per_element": value.cycles_per_element,
            "row_instructions": value.row_instructions,
        }
    written = tmp_path / "counts.yaml"
    count._write(written, table, Path("libtorch_cuda.so"))
    assert load_layer_norm_counts(written) == shipped
