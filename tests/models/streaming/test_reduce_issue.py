"""ATen's reduce kernel's counted issue cost and the index reductions (argmax, argmin): the
shipped counts, the chain's serial arithmetic by hand, the int64 output and its errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel import DType, LocalOp, OpKind, Phase, TensorRole, TensorSpec, ops
from opmodel.core.errors import ConfigError, OpModelError
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.models.streaming.aten_reduce import ReduceShape, aten_reduce_kernel, vectorized
from opmodel.models.streaming.counted import counted_instructions, counted_layer_norm
from opmodel.models.streaming.counted_reduce import (
    COUNTS_FILE,
    load_reduce_counts,
    load_reduce_lists,
    reduce_instructions,
    reduce_issue_cycles,
    reduce_registers,
)

A100_SXM = load_hardware("a100_40gb_sxm")  # sm_80, 108 SMs, 1.41 GHz, 4 SMSPs of 32 lanes
MODEL = get_model("effective_roofline")


def _reduction(shape: tuple[int, ...], out: tuple[int, ...], x: str, y: str, fn: str) -> LocalOp:
    return LocalOp(
        name="r",
        kind=OpKind.REDUCTION,
        phase=Phase.INFERENCE,
        tensors=(
            TensorSpec(TensorRole.INPUT, shape, DType(x)),
            TensorSpec(TensorRole.OUTPUT, out, DType(y)),
        ),
        attrs={"function": fn},
    )


def test_shipped_counts_cover_every_function_dtype_and_architecture() -> None:
    counts = load_reduce_counts(COUNTS_FILE)
    functions = {"sum", "mean", "max", "min", "argmax", "argmin"}
    for arch in ("sm80", "sm86", "sm90", "sm100"):
        for dtype in ("fp32", "fp16", "bf16"):
            assert {f for a, d, f in counts if (a, d) == (arch, dtype)} == functions
    # sm_80 fp16: an argmax step (57 integer-pipe instructions at half rate for 4 elements)
    # costs 28.5 cycles an element, a max 10.5, a sum's four scalar loads 6.5
    assert counts[("sm80", "fp16", "argmax")] == 28.5
    assert counts[("sm80", "fp16", "max")] == 10.5
    assert counts[("sm80", "fp16", "sum")] == 6.5
    assert all(counts[(a, d, "argmax")] > counts[(a, d, "max")] for a, d, _ in counts)


def test_issue_cycles_only_for_counted_innermost_reductions() -> None:
    assert reduce_issue_cycles("sm80", DType.FP16, "argmax", True) == 28.5
    assert reduce_issue_cycles("sm89", DType.FP16, "argmax", True) == 28.5  # runs sm86's
    assert reduce_issue_cycles("sm80", DType.FP16, "argmax", False) == 0.0  # leading axes
    assert reduce_issue_cycles("cdna3", DType.FP16, "argmax", True) == 0.0  # no count
    assert reduce_issue_cycles(None, DType.FP32, "sum", True) == 0.0


def test_a_bad_counts_file_is_a_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "reduce.yaml"
    bad.write_text("source: x\ncycles_per_element:\n  sm80:\n    fp16: {argmax: -1}\n")
    with pytest.raises(ConfigError, match=r"reduce.yaml: cycles_per_element.sm80.fp16.argmax"):
        load_reduce_counts(bad)
    bad.write_text("source: x\ninstructions_per_element: {}\n")
    with pytest.raises(ConfigError, match=r"needs the fields source .*, cycles_per_element"):
        load_reduce_counts(bad)


def test_index_reductions_load_vectors_in_every_dtype() -> None:
    # ArgMaxOps is instantiated with input_vec_size = 4 = vt0 (16-bit sum and mean with 8)
    assert vectorized(4096, 2, "argmax") and vectorized(4096, 2, "argmin")
    sm = A100_SXM.compute.sm
    assert sm is not None
    kernel = aten_reduce_kernel(ReduceShape(81920, 81920, 2, "argmax"), sm)
    assert kernel.serial_arithmetic  # a thread folds each step in before its next load


def test_argmax_chain_adds_its_counted_arithmetic_by_hand() -> None:
    """torch.argmax(a, 1) against amax over 81,920 fp16 rows of 81,920 on the A100 SXM: one
    CTA a row, 16 warps (4 per SMSP, so ``L_fma / k`` = 4 / 4 = 1 and the CTA issues at the
    SM's rate). Its chain holds 81,920 x (28.5 - 10.5) / (4 x 32 lanes) / 1.41 GHz = 8.17 µs
    more arithmetic than amax's."""
    x = (81920, 81920)
    argmax = MODEL.predict(_reduction(x, (81920,), "fp16", "int64", "argmax"), A100_SXM)
    amax = MODEL.predict(_reduction(x, (81920,), "fp16", "fp16", "max"), A100_SXM)
    extra = 81920 * (28.5 - 10.5) / 128 / 1.41e9
    chains = [p.diagnostics.chain_s for p in (argmax, amax)]
    assert chains[0] - chains[1] == pytest.approx(extra)
    assert argmax.latency_s > amax.latency_s
    # the same bytes in, 8 bytes an output out where amax writes 2
    assert argmax.traffic["hbm"].read_bytes == amax.traffic["hbm"].read_bytes
    assert argmax.traffic["hbm"].write_bytes == 4 * amax.traffic["hbm"].write_bytes


def test_ops_reduction_writes_int64_indices() -> None:
    op = ops.reduction(64, 128256, "fp32", function="argmin")
    assert [(t.shape, t.dtype) for t in op.tensors] == [
        ((64, 128256), DType.FP32),
        ((64,), DType.INT64),
    ]
    assert ops.reduction(64, 128, "bf16", function="max").tensors[1].dtype is DType.BF16


@pytest.mark.parametrize(
    ("x", "y", "fn", "message"),
    [
        ("fp32", "fp32", "argmax", "argmax writes int64 indices: output dtype must be int64"),
        ("int32", "int64", "argmin", "argmin: input dtype must be a float type"),
        ("int32", "int32", "sum", "function sum: input and output dtypes must be float types"),
        ("fp32", "int64", "max", "argmax and argmin write int64"),
    ],
)
def test_dtype_errors_are_one_line(x: str, y: str, fn: str, message: str) -> None:
    with pytest.raises(OpModelError, match=message) as raised:
        _ = _reduction((64, 128), (64,), x, y, fn).view
    assert "\n" not in str(raised.value)


def test_instruction_counts_beside_the_cycles() -> None:
    # an argmax step issues 78 instructions for 4 elements (19.5 each) that take 114 cycles
    # of the integer pipe (28.5); the layer norm's file carries its instructions too
    assert reduce_instructions("sm80", DType.FP16, "argmax", True) == 19.5
    assert reduce_instructions("sm80", DType.FP16, "argmax", False) is None
    assert reduce_instructions("cdna3", DType.FP16, "sum", True) is None
    norm = counted_layer_norm("sm80", DType.FP16)
    assert norm is not None and (norm.instructions_per_element, norm.cycles_per_element) == (
        29.5,
        34.5,
    )
    # ATen's sub is add_stub with -alpha: the add kernel's count
    add = counted_instructions("sm80", DType.BF16, "add")
    assert add is not None and counted_instructions("sm80", DType.BF16, "sub") == add


def test_counted_registers_by_outputs_per_load() -> None:
    # cuobjdump -res-usage of PyTorch 2.14.1, sm_80: a bf16 sum's reduce_kernel<512, 1>,
    # <256, 2> and <128, 4> hold 30, 32 and 47 registers; an argmax's 32, 48 and 80
    table = load_reduce_lists(COUNTS_FILE, "registers")
    assert table[("sm80", "bf16", "sum")] == (30, 32, 47)
    assert reduce_registers("sm80", DType.FP32, "argmax", 4) == 80
    assert reduce_registers("sm89", DType.FP16, "argmax", 1) == 38  # runs sm_86's
    assert reduce_registers("sm80", DType.FP32, "sum", 3) is None
    assert reduce_registers(None, DType.FP32, "sum", 1) is None


def test_leading_axis_launch_takes_its_counted_registers() -> None:
    """dy.sum(0) of [8192, 4096] fp32 on the A100 SXM: 4,096 outputs in runs of 4
    (get_output_vec_size 4), so reduce_kernel<128, 4>: 48 registers, 4 warps a CTA,
    ceil(48 x 32 / 256) x 256 = 1,536 a warp: 65,536 / (1,536 x 4) = 10 CTAs an SM, where 32
    registers would let 16 (the 32-CTA and 64-warp limits are not reached)."""
    x = TensorSpec(TensorRole.INPUT, (8192, 4096), DType.FP32)
    y = TensorSpec(TensorRole.OUTPUT, (4096,), DType.FP32)
    op = LocalOp(
        name="bias_grad", kind=OpKind.REDUCTION, phase=Phase.TRAIN_BWD, tensors=(x, y),
        attrs={"function": "sum", "dim": [0]},
    )  # fmt: skip
    e = MODEL.predict(op, A100_SXM).diagnostics
    assert e.kernel.threads_per_cta == 128
    assert e.kernel.registers_per_thread == 48
    assert (e.resident_ctas_per_sm, e.occupancy_limiter) == (10, "registers")


def test_a_bad_registers_table_is_a_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "reduce.yaml"
    bad.write_text("source: x\nregisters:\n  sm80:\n    fp16: {sum: [30, 32]}\n")
    with pytest.raises(ConfigError, match=r"registers.sm80.fp16.sum: must be 3 integers in 1-255"):
        load_reduce_lists(bad, "registers")


def test_leading_axis_loops_are_counted() -> None:
    # reduce_kernel<128, 4> walks a leading axis in steps of four 4-output loads: an fp32 sum's
    # step costs 2.625 cycles an element on sm_80, an argmax's 25.75; <256, 2> 3.375 and 27.5
    assert reduce_issue_cycles("sm80", DType.FP32, "sum", False, 4) == 2.625
    assert reduce_issue_cycles("sm80", DType.FP32, "sum", False, 2) == 3.375
    assert reduce_issue_cycles("sm80", DType.FP32, "argmax", False, 4) == 25.75
    assert reduce_issue_cycles("sm80", DType.FP32, "sum", False, 1) == 0.0  # not counted
    assert reduce_issue_cycles("cdna3", DType.FP32, "sum", False, 4) == 0.0


def test_a_bad_leading_list_is_a_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "reduce.yaml"
    text = "source: x\nleading_cycles_per_element:\n  sm80:\n    fp32: {sum: [3.375, -1]}\n"
    bad.write_text(text)
    section = "leading_cycles_per_element"
    with pytest.raises(ConfigError, match=rf"{section}.sm80.fp32.sum: must be 2 numbers > 0"):
        load_reduce_lists(bad, section)
