"""scripts/count_flash_sass.py on hand-written SASS (no CUDA tools): the main loop it takes,
the variant it picks, and the shipped file's form."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel.models.attention.counted import FLASH_COUNTS_FILE, load_flash_counts
from tests.scripts.loader import load_script

count = load_script("count_flash_sass")

# a prologue, a loop whose body jumps into a second backward branch's range (as the
# compiler lays out FA2's prefetching iteration), and an epilogue
_LISTING = """
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   HMMA.16816.F32.BF16 R4, R8, R12, R4 ;
        /*0020*/                   LDSM.16.M88.4 R8, [R2] ;
        /*0030*/                   HMMA.16816.F32.BF16 R4, R8, R12, R4 ;
        /*0040*/                   FMUL R3, R3, 0.5 ;
        /*0050*/              @P0 BRA 0x20 ;
        /*0060*/                   MUFU.EX2 R3, R3 ;
        /*0070*/              @P1 BRA 0x10 ;
        /*0080*/                   STG.E desc[UR4][R2.64], R3 ;
        /*0090*/                   EXIT ;
"""


def test_the_main_loop_spans_the_outermost_backward_branch() -> None:
    loop = count.main_loop(count.parse(_LISTING))
    assert [ins.address for ins in loop] == [0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70]
    assert sum(1 for ins in loop if ins.opcode.startswith("HMMA")) == 2
    assert count.ldsm_bytes(loop) == 4 * 128  # one LDSM.16.M88.4: four 8 x 8 b16 matrices


def test_a_listing_without_a_loop_is_an_error() -> None:
    with pytest.raises(ValueError, match="no loop"):
        count.main_loop(
            count.parse(_LISTING.replace("@P0 BRA 0x20", "NOP").replace("@P1 BRA 0x10", "NOP"))
        )


def test_only_the_plain_variant_is_taken() -> None:
    """Flags after the traits: dropout, causal, local, ALiBi, even MN, even K, soft cap,
    return softmax; even MN preferred, any other flag set excluded."""
    even = ("false", "false", "false", "false", "true", "true", "false", "false")
    uneven = ("false", "false", "false", "false", "false", "true", "false", "false")
    causal = ("false", "true", "false", "false", "true", "true", "false", "false")
    assert (count._plain_rank(even), count._plain_rank(uneven)) == (0, 1)
    assert count._plain_rank(causal) is None
    name = (
        "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false,"
        " false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t>"
        " >, false, true, false, false, true, true, false, false>(Flash_fwd_params)"
    )
    assert count._flags(name) == causal


def test_the_shipped_counts_are_the_written_form(tmp_path: Path) -> None:
    counts = load_flash_counts(FLASH_COUNTS_FILE)
    table: dict[str, dict[tuple[int, int, int, int], tuple[int, int, int]]] = {}
    for (arch, head, rows, keys), (warps, mma, other, ldsm) in counts.items():
        shape = (head, rows, keys, warps)
        table.setdefault(arch.replace("sm", "sm_"), {})[shape] = (mma, other, ldsm)
    out = tmp_path / "flash.yaml"
    count._write(out, table, Path("torch/lib/libtorch_cuda.so"))
    assert out.read_text() == FLASH_COUNTS_FILE.read_text()
