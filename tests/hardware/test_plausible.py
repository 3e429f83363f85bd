"""Plausible spans: a config value typed in another unit than its field's SI one (GHz for Hz,
GB/s for bytes/s, ns for s, pJ for J, kW for W) is a one-line error naming the field and the
span it must fall in, and so is one large enough to overflow the models' arithmetic."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from opmodel import ConfigError
from opmodel.core.errors import OpModelError
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.parsing.op_file import load_op
from tests.conftest import predictable
from tests.hardware.mutated_config import assert_problems, base_config, set_field

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

UNIT_SLIPS: list[tuple[Callable[[dict[str, Any]], None], list[str]]] = [
    (
        set_field("compute.clock_hz", 1.755),  # GHz
        [
            "compute.clock_hz: outside the plausible 1e+07 to 1e+11 Hz, typed in another unit? (got 1.755)"
        ],
    ),
    (
        set_field("memory.levels.0.bandwidth_bytes_per_s", 3350),  # GB/s
        [
            "memory.levels[0].bandwidth_bytes_per_s: outside the plausible 1e+06 to 1e+18 bytes/s, typed in another unit? (got 3350.0)"
        ],
    ),
    (
        set_field("memory.levels.0.latency_s", 600),  # ns or cycles
        [
            "memory.levels[0].latency_s: outside the plausible 0 to 0.01 s, typed in another unit? (got 600.0)"
        ],
    ),
    (
        set_field("memory.levels.1.size_bytes", 50),  # MB
        [
            "memory.levels[1].size_bytes: outside the plausible 1024 to 1e+15 bytes, typed in another unit? (got 50)"
        ],
    ),
    (
        set_field("compute.vector_energy_j_per_flop.fp32", 5.0),  # pJ
        [
            "compute.vector_energy_j_per_flop.fp32: outside the plausible 0 to 1e-06 J/FLOP, typed in another unit? (got 5.0)"
        ],
    ),
    (
        set_field("power.tdp_w", 0.7),  # kW
        ["power.tdp_w: outside the plausible 1 to 1e+06 W, typed in another unit? (got 0.7)"],
    ),
    (
        set_field("overhead.kernel_launch_overhead_s", 5),  # µs
        [
            "overhead.kernel_launch_overhead_s: outside the plausible 0 to 0.01 s, typed in another unit? (got 5.0)"
        ],
    ),
    (
        set_field(
            "compute.sm.sm_count", 1e12
        ),  # or large enough to overflow the models' arithmetic
        ["compute.sm.sm_count: outside the plausible 1 to 1e+06 (got 1000000000000)"],
    ),
]


@pytest.mark.parametrize(
    ("mutate", "expected"), UNIT_SLIPS, ids=[f"unit_slip_{i}" for i in range(len(UNIT_SLIPS))]
)
def test_unit_slips_report_the_field_and_its_span(
    tmp_path: Path, mutate: Callable[[dict[str, Any]], None], expected: list[str]
) -> None:
    assert_problems(tmp_path, mutate, expected)


def test_zero_passes_where_the_field_admits_it(tmp_path: Path) -> None:
    data = copy.deepcopy(base_config())
    set_field("memory.levels.3.latency_s", 0)(data)
    set_field("compute.vector_energy_j_per_flop.fp32", 0)(data)
    path = tmp_path / "zeros.yaml"
    path.write_text(yaml.safe_dump(data))
    spec = load_hardware(path)
    assert spec.memory.levels[3].latency_s == 0


@pytest.mark.parametrize(
    "field",
    [
        "compute.sm.sm_count",
        "compute.sm.warp_size",
        "memory.levels.0.latency_s",
        "memory.levels.0.energy_j_per_byte",
        "compute.tensor_energy_j_per_flop.bf16",
    ],
)
def test_values_that_would_overflow_never_reach_a_model(tmp_path: Path, field: str) -> None:
    """Before the spans, 1e308 in these fields loaded and predict raised OverflowError or
    returned an infinite energy."""
    data = copy.deepcopy(base_config())
    set_field(field, 1e308)(data)
    path = tmp_path / "huge.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match="outside the plausible"):
        load_hardware(path)


def test_every_value_inside_the_spans_predicts_finite_numbers(tmp_path: Path) -> None:
    """At each span's top the shipped examples still give finite, positive latencies and
    energies (or a one-line model error): the spans keep the arithmetic in range."""
    data = copy.deepcopy(base_config())
    for field, value in [
        ("compute.sm.sm_count", 1e6),
        ("memory.levels.0.latency_s", 1e-2),
        ("memory.levels.0.energy_j_per_byte", 1e-6),
        ("compute.tensor_energy_j_per_flop.bf16", 1e-6),
    ]:
        set_field(field, value)(data)
    path = tmp_path / "top.yaml"
    path.write_text(yaml.safe_dump(data))
    spec = load_hardware(path)
    model = get_model("effective_roofline")
    for op in map(load_op, sorted(EXAMPLES.glob("*.yaml"))):
        if not predictable(op, spec):
            continue
        profile = model.predict(op, spec)
        assert math.isfinite(profile.latency_s) and profile.latency_s > 0
        assert math.isfinite(profile.energy_j) and profile.energy_j >= 0


def _numeric_leaves(node: Any, path: str = "") -> list[str]:
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in _numeric_leaves(v, f"{path}{k}.")]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in _numeric_leaves(v, f"{path}{i}.")]
    number = isinstance(node, int | float) and not isinstance(node, bool)
    return [path[:-1]] if number else []


@pytest.mark.parametrize("value", [1e308, -1])
def test_no_numeric_field_of_a_config_breaks_a_prediction(tmp_path: Path, value: float) -> None:
    """Every number of ``gpu_generic`` set to ``value`` in turn: the config is refused in one
    line, or the examples predict finite, positive latencies and energies (or a one-line model
    error). Before the spans, 1e308 in about 20 fields of a GPU config gave OverflowError,
    ZeroDivisionError or an infinite energy."""
    model = get_model("effective_roofline")
    ops = [load_op(EXAMPLES / f"{name}.yaml") for name in ("gemm", "softmax", "attention_decode")]
    for field in _numeric_leaves(base_config()):
        data = copy.deepcopy(base_config())
        set_field(field, value)(data)
        path = tmp_path / "mutated.yaml"
        path.write_text(yaml.safe_dump(data))
        try:
            spec = load_hardware(path)
        except ConfigError as exc:
            assert "\n" not in str(exc), field
            continue
        for op in ops:
            try:
                profile = model.predict(op, spec)
            except OpModelError as exc:
                assert "\n" not in str(exc), field
                continue
            assert math.isfinite(profile.latency_s) and profile.latency_s > 0, field
            assert math.isfinite(profile.energy_j) and profile.energy_j >= 0, field
