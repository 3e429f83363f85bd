"""opmodel.ops on arbitrary arguments: every constructor returns a valid op or raises one
one-line OpValidationError, never another exception (hypothesis over integers of any sign,
floats, booleans, strings, None and numpy integers)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opmodel import LocalOp, OpValidationError, ops
from tests.hypothesis_budget import examples

_anything = st.one_of(
    st.integers(-3, 70000),
    st.floats(allow_nan=True),
    st.booleans(),
    st.none(),
    st.text(max_size=4),
    st.sampled_from(["bf16", "fp32", "fp8", "bf17", "int64"]),
    st.lists(st.integers(-2, 5000), max_size=5),
)
CONSTRUCTORS: dict[str, tuple[Callable[..., LocalOp], int]] = {
    "gemm": (ops.gemm, 4),
    "batched_gemm": (ops.batched_gemm, 5),
    "grouped_gemm": (ops.grouped_gemm, 4),
    "grouped_gemm_wgrad": (ops.grouped_gemm_wgrad, 4),
    "attention_prefill": (ops.attention_prefill, 5),
    "attention_decode": (ops.attention_decode, 5),
    "softmax": (ops.softmax, 3),
    "layernorm": (ops.layernorm, 3),
    "rmsnorm": (ops.rmsnorm, 3),
    "elementwise": (ops.elementwise, 3),
    "rope": (ops.rope, 4),
    "reduction": (ops.reduction, 3),
    "embedding": (ops.embedding, 4),
    "copy": (ops.copy, 2),
    "cross_entropy": (ops.cross_entropy, 3),
    "collective": (ops.collective, 3),
    "optimizer": (ops.optimizer, 3),
}


def test_every_constructor_is_listed() -> None:
    assert set(CONSTRUCTORS) == set(ops.__all__)


@pytest.mark.parametrize("name", sorted(CONSTRUCTORS))
@settings(max_examples=examples(60), deadline=None)
@given(data=st.data())
def test_a_constructor_builds_or_explains(name: str, data: st.DataObject) -> None:
    build, count = CONSTRUCTORS[name]
    args = [data.draw(_anything, label=f"arg{i}") for i in range(count)]
    try:
        op = build(*args)
    except OpValidationError as error:
        assert "\n" not in str(error) and str(error)
    else:
        assert isinstance(op, LocalOp) and op.footprint.total_bytes > 0
