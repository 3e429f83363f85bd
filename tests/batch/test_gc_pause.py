"""paused_gc: the collector is off inside and restored after; predictions leave no cycles."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from opmodel import LocalOp, OpModelError
from opmodel.batch import paused_gc, predict_many
from opmodel.core.profile import OpProfile
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models import get_model
from opmodel.parsing import load_op

from ..conftest import EXAMPLES

OPS = [load_op(path) for path in sorted(EXAMPLES.glob("*.yaml"))]
MODELS = ("roofline", "extended_roofline", "effective_roofline")


@pytest.fixture
def collector_on() -> Iterator[None]:
    """The collector enabled for the test, and as it was after it."""
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


@pytest.mark.usefixtures("collector_on")
def test_paused_inside_and_enabled_after() -> None:
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()


@pytest.mark.usefixtures("collector_on")
def test_enabled_again_after_an_exception() -> None:
    with pytest.raises(ValueError, match="inside"), paused_gc():
        raise ValueError("inside")
    assert gc.isenabled()


@pytest.mark.usefixtures("collector_on")
def test_a_collector_already_off_stays_off() -> None:
    gc.disable()
    with paused_gc():
        assert not gc.isenabled()
    assert not gc.isenabled()


@pytest.mark.parametrize("hardware", ["a10", "h100_sxm", "mi300x", "tpu_v5e"])
def test_predictions_leave_no_cyclic_garbage(hardware: str) -> None:
    """Every example op through every model (errors included): reference counting frees all
    a prediction drops, so pausing the collector around a loop of them loses no memory."""
    spec = load_hardware(hardware)
    gc.collect()
    with paused_gc():
        predicted = 0
        for op in OPS:
            for name in MODELS:
                try:
                    get_model(name).predict(op, spec)
                    predicted += 1
                except OpModelError:
                    pass
        found = gc.collect()  # collects even while automatic collection is off
    assert predicted > len(OPS)  # most ops ran on most models
    assert found == 0


class _Recording:
    """An ``OpModel`` that records whether the collector was enabled at each predict."""

    name = "recording"
    supported_kinds = get_model("roofline").supported_kinds

    def __init__(self) -> None:
        self.enabled: list[bool] = []

    def supports(self, op: LocalOp) -> bool:
        return get_model("roofline").supports(op)

    def predict(self, op: LocalOp, hardware: HardwareSpec) -> OpProfile:
        self.enabled.append(gc.isenabled())
        return get_model("roofline").predict(op, hardware)


@pytest.mark.usefixtures("collector_on")
def test_predict_many_runs_its_loop_paused() -> None:
    model = _Recording()
    profiles = predict_many(OPS[:3], "a10", model)
    assert len(profiles) == 3
    assert model.enabled == [False, False, False]
    assert gc.isenabled()
