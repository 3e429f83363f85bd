"""Optimizer steps (``OpKind.OPTIMIZER``): bytes, FLOPs, launches and passes by hand."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opmodel import LocalOp, OpKind, OpValidationError, TensorSpec, ops
from opmodel.formulas.optimizer import multi_tensor_launches, optimizer_passes
from opmodel.formulas.work import op_work
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.models.streaming.multi_tensor import REGISTERS, mta_registers
from tests.hypothesis_budget import examples
from tests.scripts.loader import load_script

H100 = load_hardware("h100_sxm")
EFFECTIVE = get_model("effective_roofline")


def test_roofline_work_by_hand() -> None:
    """AdamW over 10^8 fp32 parameters: p, g, m, v read (16 B), p, m, v written (12 B); 14
    FLOPs a parameter; with bf16 gradients 2 bytes fewer read."""
    work = op_work(ops.optimizer("adamw", 10**8))
    assert (work.read_bytes, work.write_bytes, work.vector_flops) == (
        16 * 10**8,
        12 * 10**8,
        14 * 10**8,
    )
    mixed = op_work(ops.optimizer("adamw", 10**8, grad_dtype="bf16"))
    assert mixed.read_bytes == 14 * 10**8
    sgd = op_work(ops.optimizer("sgd", 10**8, "bf16"))
    assert (sgd.read_bytes, sgd.write_bytes, sgd.vector_flops) == (4 * 10**8, 2 * 10**8, 2 * 10**8)
    profile = get_model("roofline").predict(ops.optimizer("adamw", 10**8), H100)
    assert profile.latency_s >= 28 * 10**8 / H100.hbm.bandwidth_bytes_per_s


def test_launches_by_hand() -> None:
    """Llama-2-7B's 6,738,415,616 parameters in its 291 tensors: 23,156,067 a tensor, 354
    chunks each, 103,014 in all; 320 CTAs a launch: 322 launches, 296 of 320 CTAs and 26 of 319.
    10,000 tensors of 64 elements through a one-list kernel with a scalar list (foreach_div_):
    96 tensors a launch, so 105 launches of 95 or 96 CTAs."""
    fused = optimizer_passes("adamw", "fused")[0]
    assert multi_tensor_launches(6_738_415_616, 291, fused, 320) == ((26, 319), (296, 320))
    div = next(p for p in optimizer_passes("adam", "foreach") if p.name == "foreach_div_")
    assert multi_tensor_launches(640_000, 10_000, div, 320) == ((80, 95), (25, 96))
    assert multi_tensor_launches(640_000, 10_000, div, 2240)[1][0] == 25  # the list binds


def test_passes_of_each_implementation() -> None:
    """The fused step is one kernel; PyTorch's foreach AdamW eight (its weight decay, then
    Adam's seven), SGD one, SGD with momentum three."""
    names = [p.name for p in optimizer_passes("adamw", "foreach")]
    assert names[0] == "foreach_mul_" and names[-1] == "foreach_addcdiv_" and len(names) == 8
    assert len(optimizer_passes("adam", "foreach")) == 7
    assert [len(optimizer_passes(a, "foreach")) for a in ("sgd", "sgd_momentum")] == [1, 3]
    step = ops.optimizer("adamw", 10**8, tensors=100, implementation="foreach")
    diagnostics = EFFECTIVE.predict(step, H100).diagnostics
    assert [p.name for p in diagnostics.passes] == names


def test_effective_streams_near_the_hbm_rate() -> None:
    """A large fused fp32 AdamW step moves its 28 bytes a parameter close to HBM speed: the
    model's time lies between the bytes at the datasheet rate and twice that."""
    profile = EFFECTIVE.predict(ops.optimizer("adamw", 10**9, tensors=291), H100)
    ideal = 28 * 10**9 / H100.hbm.bandwidth_bytes_per_s
    assert ideal < profile.latency_s < 2 * ideal
    assert profile.implementation == "effective_roofline/streaming/multi_tensor_apply/fused"


def test_bad_steps_are_one_line_errors() -> None:
    n = 1000

    def step(*tensors: TensorSpec, **attrs: object) -> LocalOp:
        return LocalOp(
            name="step", kind=OpKind.OPTIMIZER, phase="train_bwd", tensors=tensors, attrs=attrs
        )  # type: ignore[arg-type]

    p, g = TensorSpec("weight", (n,), "fp32"), TensorSpec("grad", (n,), "fp32")
    m = TensorSpec("workspace", (n,), "fp32")
    with pytest.raises(OpValidationError, match=r"adamw keeps 2 state tensors .* got 1"):
        step(p, g, m, algorithm="adamw")
    with pytest.raises(OpValidationError, match=r"attrs\.algorithm is required"):
        step(p, g)
    with pytest.raises(OpValidationError, match="must hold the parameters' 1000 elements"):
        step(p, TensorSpec("grad", (n + 1,), "fp32"), algorithm="sgd")
    with pytest.raises(OpValidationError, match=r"attrs\.tensors 1001 exceeds the 1000"):
        step(p, g, algorithm="sgd", tensors=n + 1)
    with pytest.raises(OpValidationError, match="must be floating-point"):
        step(TensorSpec("weight", (n,), "int8"), g, algorithm="sgd")
    with pytest.raises(OpValidationError, match="algorithm must be one of"):
        ops.optimizer("lion", n)
    with pytest.raises(OpValidationError, match=r"attrs\.implementation"):
        ops.optimizer("sgd", n, implementation="apex")


@settings(max_examples=examples(40), deadline=None)
@given(
    algorithm=st.sampled_from(["sgd", "sgd_momentum", "adam", "adamw"]),
    elements=st.integers(1, 1 << 28),
    tensors=st.integers(1, 400),
    dtype=st.sampled_from(["fp32", "bf16"]),
)
def test_foreach_is_never_faster_than_fused(
    algorithm: str, elements: int, tensors: int, dtype: str
) -> None:
    """The foreach chain reads and writes at least what the fused kernel does, in more
    launches; but plain SGD's chain is one ``_foreach_add_``, over the same bytes as the fused
    kernel, which holds more registers (44 against 32 on sm_90: two 512-thread CTAs per SM
    against four), so it may run faster (its traffic is still no smaller)."""
    tensors = min(tensors, elements)
    fused, foreach = (
        EFFECTIVE.predict(
            ops.optimizer(algorithm, elements, dtype, tensors=tensors, implementation=i), H100
        )
        for i in ("fused", "foreach")
    )
    if algorithm != "sgd":
        assert foreach.latency_s >= fused.latency_s * (1 - 1e-12)
    assert foreach.traffic["hbm"].total_bytes >= fused.traffic["hbm"].total_bytes


def test_registers_are_the_counted_ones_per_pass_and_architecture() -> None:
    """PyTorch 2.14.1's cubins (scripts/count_optimizer_registers.py): fused SGD 44 on sm_90
    (two 512-thread CTAs per SM), with momentum 58; fused Adam and AdamW one kernel, 64; the
    foreach division by a list of scalars 34; sm_89 runs sm_86's SASS; an AMD GPU takes the
    estimates (64 for fused Adam, 32 otherwise)."""
    assert mta_registers("fused_sgd", 2, "sm90") == 44
    assert mta_registers("fused_sgd", 3, "sm90") == 58
    assert mta_registers("fused_adamw", 4, "sm90") == mta_registers("fused_adam", 4, "sm90") == 64
    assert mta_registers("foreach_div_", 1, "sm90") == 34
    assert mta_registers("foreach_lerp_", 2, "sm89") == REGISTERS[("foreach_lerp_", 2)]["sm86"]
    assert (mta_registers("fused_adam", 4, "cdna3"), mta_registers("fused_sgd", 2, None)) == (
        64,
        32,
    )
    script = load_script("count_optimizer_registers")
    assert set(REGISTERS) == set(script.PASSES)
