"""Streaming kernels that write a block-scaled or sub-byte output (an activation quantised to
NVFP4 or MXFP4 by a cast, a norm fused with its quantisation): every model on every shipped
GPU config keeps the invariants of test_models.py (finite and positive, energy parts summing
to the total, at least the compulsory bytes, its scales included, through HBM, never faster
than the roofline's ideal, deterministic), and a longer tensor never runs faster."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from opmodel import DType, LocalOp, TensorSpec, ops
from opmodel.hardware import load_hardware, shipped_hardware_names
from opmodel.models import get_model
from tests.conformance.invariants import assert_profile_invariants
from tests.hypothesis_budget import examples

GPUS = [h for h in (load_hardware(n) for n in shipped_hardware_names()) if h.compute.sm]
TYPES = ("nvfp4", "mxfp4", "mxfp8", "mxfp6", "fp4", "int4")


def _build(kind: str, rows: int, length: int, dtype: str) -> LocalOp:
    """A cast of ``rows x length`` bf16 values to ``dtype`` (ATen's elementwise kernel), or an
    RMSNorm whose output is ``dtype`` (Liger's fused kernel, quantising as it stores)."""
    if kind == "cast":
        return ops.elementwise("cast", (rows, length), out_dtype=dtype)
    norm = ops.rmsnorm(rows, length)
    x, weight, y = norm.tensors
    out = TensorSpec(y.role, y.shape, DType(dtype))
    return dataclasses.replace(norm, tensors=(x, weight, out))


@settings(max_examples=examples(40), deadline=None)
@given(data=st.data())
def test_quantising_kernels_keep_the_invariants(data: st.DataObject) -> None:
    hardware = data.draw(st.sampled_from(GPUS), label="hardware")
    model = data.draw(st.sampled_from(("roofline", "extended_roofline", "effective_roofline")))
    kind = data.draw(st.sampled_from(("cast", "rmsnorm")), label="kind")
    dtype = data.draw(st.sampled_from(TYPES), label="dtype")
    rows = data.draw(st.integers(1, 8192), label="rows")
    length = data.draw(st.sampled_from((16, 32, 96, 1024, 4096, 7168)), label="length")
    op = _build(kind, rows, length, dtype)
    predictor = get_model(model)
    profile = predictor.predict(op, hardware)
    assert_profile_invariants(op, profile, hardware)
    assert predictor.predict(_build(kind, rows, length, dtype), hardware).to_dict() == (
        profile.to_dict()
    )
    longer = predictor.predict(_build(kind, 2 * rows + 1, length, dtype), hardware)
    assert longer.latency_s >= profile.latency_s * (1 - 1e-9)
