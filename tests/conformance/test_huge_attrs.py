"""Every integer attr of every example op set far past any real kernel (2^40): each model
predicts finite, positive numbers or refuses the op in one line, and quickly: no search or loop
runs over an attr's value (``warps_per_cta: 2^40`` once searched its warp grid warp by warp)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from opmodel import LocalOp
from opmodel.core.attrs import attr_specs
from opmodel.core.errors import OpModelError
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.parsing.op_file import load_op

from ..conftest import EXAMPLES

HUGE = 2**40


def _variants(path: Path) -> list[LocalOp]:
    """The example with each of its kind's integer attrs (or integer lists) set to HUGE."""
    base = load_op(path)
    ops = []
    for name, spec in attr_specs(base.kind).items():
        if spec.kind not in (int, tuple):
            continue
        value: object = HUGE if spec.kind is int else [HUGE]
        attrs = {**base.attrs, name: value}
        try:
            op = LocalOp(
                name=base.name, kind=base.kind, phase=base.phase, tensors=base.tensors, attrs=attrs
            )
            ops.append(op)
        except OpModelError as exc:
            assert "\n" not in str(exc)
    return ops


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.stem)
def test_huge_integer_attrs_never_break_a_model(path: Path) -> None:
    hardware = load_hardware("h100_sxm")
    for op in _variants(path):
        for name in ("roofline", "extended_roofline", "effective_roofline"):
            try:
                profile = get_model(name).predict(op, hardware)
            except OpModelError as exc:
                assert "\n" not in str(exc), (name, op.attrs)
                continue
            assert math.isfinite(profile.latency_s) and profile.latency_s > 0, (name, op.attrs)
            assert math.isfinite(profile.energy_j) and profile.energy_j >= 0, (name, op.attrs)
