"""Ops, hardware specs and profiles cross process boundaries: they pickle, copy and deep-copy,
and what comes back predicts and compares as the original (multiprocessing, Ray, Dask and
on-disk caches need this; read-only maps used to be mappingproxy, which does not pickle)."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import pytest

from opmodel import ConfigError, OpValidationError
from opmodel.core.frozen_dict import FrozenDict
from opmodel.hardware import load_hardware
from opmodel.models import get_model, model_names
from opmodel.parsing import load_op
from tests.conftest import predictable

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.yaml"))


@pytest.mark.parametrize("hardware_name", ["h100_sxm", "a100_80gb_sxm", "tpu_v5e"])
def test_round_trip_of_every_example(hardware_name: str) -> None:
    hardware = load_hardware(hardware_name)
    back_hardware = pickle.loads(pickle.dumps(hardware))
    assert back_hardware == hardware and back_hardware.derived_cache == {}
    for name in model_names():
        model = get_model(name)
        for path in EXAMPLES:
            op = load_op(path)
            if not model.supports(op) or not predictable(op, hardware):
                continue
            profile = model.predict(op, hardware)  # fills both derived caches
            back_op = pickle.loads(pickle.dumps(op))
            assert back_op == op and hash(back_op) == hash(op) and back_op.derived_cache == {}
            assert pickle.loads(pickle.dumps(profile)).to_dict() == profile.to_dict()
            again = model.predict(back_op, back_hardware).to_dict()
            assert (
                again == profile.to_dict() == model.predict(copy.deepcopy(op), hardware).to_dict()
            )


def test_a_pickled_op_carries_no_memo() -> None:
    hardware = load_hardware("h100_sxm")
    op = load_op(EXAMPLES[0])
    before = len(pickle.dumps(op))
    get_model("effective_roofline").predict(op, hardware)
    assert op.derived_cache and len(pickle.dumps(op)) == before


def test_frozen_dict_is_read_only_and_a_dict_elsewhere() -> None:
    frozen = FrozenDict({"hbm": 1.0})
    for change in (
        lambda: frozen.__setitem__("l2", 2.0),
        lambda: frozen.update(l2=2.0),
        lambda: frozen.pop("hbm"),
        lambda: frozen.setdefault("l2", 2.0),
        frozen.clear,
        frozen.popitem,
        lambda: frozen.__delitem__("hbm"),
    ):
        with pytest.raises(TypeError, match="FrozenDict is read-only"):
            change()
    assert frozen == {"hbm": 1.0} and copy.copy(frozen) is frozen
    back = pickle.loads(pickle.dumps(frozen))
    assert type(back) is FrozenDict and back == frozen
    assert type(copy.deepcopy(frozen)) is FrozenDict


def test_errors_pickle_with_their_problems() -> None:
    error = ConfigError(["a.yaml: x: bad", "a.yaml: y: worse"])
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is ConfigError and back.problems == error.problems
    assert str(back) == str(error)
    assert str(pickle.loads(pickle.dumps(OpValidationError("op 'x': bad")))) == "op 'x': bad"
