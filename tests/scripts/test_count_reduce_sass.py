"""scripts/count_reduce_sass.py on hand-written SASS listings shaped like ATen's reduce kernel
(no CUDA tools): the loop it counts, its common path, the pipes and the kernels' names."""

from __future__ import annotations

import pytest

from tests.scripts.loader import load_script

count = load_script("count_reduce_sass")

# a vectorized step (0x10-0xb0): one 8-byte load of 4 halves, a fold of the first value
# (convert, compare, select), a branch over the NaN accumulator's arm (0x70-0x80) to the
# compare arm it falls into, then the loop test; before it a scalar loop of one load
_VECTOR = """
        /*0000*/                   LDG.E.U16 R2, [R4.64] ;
        /*0008*/              @P0 BRA 0x0 ;
        /*0010*/                   IMAD.WIDE.U32 R2, R21, 0x8, R14 ;
        /*0020*/                   LDG.E.64 R2, [R2.64] ;
        /*0030*/                   HADD2.F32 R23, -RZ, R2.H0_H0 ;
        /*0040*/              @P1 BRA 0x70 ;
        /*0050*/                   FSETP.GT.AND P2, PT, R4, R23, PT ;
        /*0060*/                   BRA 0x90 ;
        /*0070*/                   FSETP.GTU.AND P2, PT, |R23|, +INF , PT ;
        /*0080*/                   ISETP.LT.U32.AND P3, PT, R5, R20, PT ;
        /*0090*/                   FSEL R4, R4, R23, P2 ;
        /*00a0*/                   SEL R5, R5, R20, P2 ;
        /*00b0*/             @!P6 BRA 0x10 ;
        /*00c0*/                   EXIT ;
"""

# two loops of four scalar loads: the general one (an extra IMAD per load) and the contiguous
# one, which the count takes
_SCALAR = """
        /*0000*/                   IMAD R8, R8, R9, RZ ;
        /*0010*/                   IMAD R10, R10, R9, RZ ;
        /*0020*/                   IMAD R12, R12, R9, RZ ;
        /*0030*/                   IMAD R14, R14, R9, RZ ;
        /*0040*/                   LDG.E.U16 R2, [R8.64] ;
        /*0050*/                   LDG.E.U16 R3, [R10.64] ;
        /*0060*/                   LDG.E.U16 R4, [R12.64] ;
        /*0070*/                   LDG.E.U16 R5, [R14.64] ;
        /*0080*/             @!P0 BRA 0x0 ;
        /*0090*/                   LDG.E.U16 R2, [R8.64] ;
        /*00a0*/                   LDG.E.U16 R3, [R10.64] ;
        /*00b0*/                   LDG.E.U16 R4, [R12.64] ;
        /*00c0*/                   LDG.E.U16 R5, [R14.64] ;
        /*00d0*/                   FADD R6, R6, R2 ;
        /*00e0*/             @!P0 BRA 0x90 ;
        /*00f0*/                   EXIT ;
"""


def test_vector_step_is_the_loop_of_one_wide_load_on_its_common_path() -> None:
    code = count.parse(_VECTOR)
    path = [ins.address for ins in count.step_loop(code, True, "fp16")]
    # the NaN arm (0x70, 0x80) skipped by the compare arm's jump
    assert path == [0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x90, 0xA0, 0xB0]


def test_cycles_per_element_take_the_busiest_pipe() -> None:
    """9 instructions (issue 9 cycles); on the integer ALU FSETP, FSEL, SEL: 3 at half rate,
    6 cycles; the fma pipe HADD2.F32 and IMAD: 2 at half rate on sm_80, 4 cycles. So 9 / 4
    elements = 2.25 instructions and 2.25 cycles an element; with 5 more selects the ALU's
    16 cycles bind over 14 instructions: 3.5 instructions and 4 cycles an element."""
    code = count.parse(_VECTOR)
    assert count.count_kernel(code, "sm_80", True, "fp16") == (9 / 4, 9 / 4)
    more = _VECTOR.replace(
        "        /*00b0*/",
        "        /*00a4*/                   SEL R6, R6, R20, P2 ;\n"
        "        /*00a8*/                   SEL R7, R7, R20, P2 ;\n"
        "        /*00ac*/                   SEL R8, R8, R20, P2 ;\n"
        "        /*00ad*/                   SEL R9, R9, R20, P2 ;\n"
        "        /*00ae*/                   SEL R10, R10, R20, P2 ;\n"
        "        /*00b0*/",
    )
    assert count.count_kernel(count.parse(more), "sm_80", True, "fp16") == (14 / 4, 16 / 4)


def test_unvectorized_step_is_the_shortest_four_load_loop() -> None:
    code = count.parse(_SCALAR)
    path = [ins.address for ins in count.step_loop(code, False, "bf16")]
    assert path == [0x90, 0xA0, 0xB0, 0xC0, 0xD0, 0xE0]


def test_vectorization_and_kernel_names() -> None:
    assert not count.vectorized("sum", "bf16") and not count.vectorized("mean", "fp16")
    assert count.vectorized("sum", "fp32") and count.vectorized("argmax", "bf16")
    name = count.kernel_name("argmax", "bf16")
    assert name == (
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, "
        "at::native::ArgMaxOps<float>, "
    )
    assert "MaxNanFunctor<float> >, " in count.kernel_name("max", "fp32")


# a <128, 4> kernel's two loops over a leading axis of fp32: the general one (an IMAD more per
# load) and the contiguous one, four 16-byte loads of 4 outputs a step
_LEADING = """
        /*0000*/                   IMAD R8, R8, R9, RZ ;
        /*0010*/                   LDG.E.128 R12, [R8.64] ;
        /*0020*/                   LDG.E.128 R16, [R8.64+0x10] ;
        /*0030*/                   LDG.E.128 R20, [R8.64+0x20] ;
        /*0040*/                   LDG.E.128 R24, [R8.64+0x30] ;
        /*0050*/                   IMAD R10, R10, R9, RZ ;
        /*0060*/             @!P0 BRA 0x0 ;
        /*0070*/                   LDG.E.128 R12, [R8.64] ;
        /*0080*/                   LDG.E.128 R16, [R8.64+0x10] ;
        /*0090*/                   LDG.E.128 R20, [R8.64+0x20] ;
        /*00a0*/                   LDG.E.128 R24, [R8.64+0x30] ;
        /*00b0*/                   FADD R4, R4, R12 ;
        /*00c0*/             @!P0 BRA 0x70 ;
        /*00d0*/                   EXIT ;
"""


def test_leading_loop_is_the_shortest_of_four_output_vector_loads() -> None:
    code = count.parse(_LEADING)
    path = count.leading_loop(code, "fp32", 4)
    assert [ins.address for ins in path] == [0x70, 0x80, 0x90, 0xA0, 0xB0, 0xC0]
    # 16 outputs a step (4 loads of 4): 6 instructions, 6 issue cycles, 0.375 an element
    assert count.issue_cycles(path, "sm_80") / 16 == 6 / 16
    # 2 outputs a load in fp32 are 8-byte loads: none here
    with pytest.raises(SystemExit, match=r"no loop of four LDG\.E\.64 loads"):
        count.leading_loop(code, "fp32", 2)
