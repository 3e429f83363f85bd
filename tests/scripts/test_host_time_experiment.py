"""scripts/host_time_experiment.py: the two-term launch queue by hand, and which entries count
as module calls."""

from __future__ import annotations

import pytest

from tests.scripts.loader import load_script


def test_the_queue_charges_a_module_call_its_extra_host_time() -> None:
    script = load_script("host_time_experiment")
    # host 1 + 2 a module call: issued at 1, 4 (module), 5; kernels of 0.5, 3 and 0.5:
    # finish 1.5, then max(1.5, 4) + 3 = 7, then max(7, 5) + 0.5 = 7.5
    assert script.pass_time_s([0.5, 3.0, 0.5], [0, 1, 0], 1.0, 2.0) == pytest.approx(7.5)
    # with no module term it is the one-gap queue: issued 1, 2, 3 -> 1.5, 5, 5.5
    assert script.pass_time_s([0.5, 3.0, 0.5], [0, 1, 0], 1.0, 0.0) == pytest.approx(5.5)


def test_module_calls_are_linear_layers_norms_and_activations() -> None:
    script = load_script("host_time_experiment")
    calls = script.MODULES["module_calls"]
    assert calls({"batch": 1}, "gemm") and calls({}, "layernorm") and calls({}, "conv2d")
    assert calls({"op": "gelu"}, "elementwise")
    assert not calls({"batch": 96}, "gemm")  # torch.matmul of the attention scores
    assert not calls({"op": "pointwise_add"}, "elementwise") and not calls({}, "softmax")
    assert script.MODULES["linear"]({"batch": 1}, "gemm")
    assert not script.MODULES["linear"]({}, "layernorm")
    assert script.MODULES["not_elementwise"]({}, "softmax")
