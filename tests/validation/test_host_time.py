"""The host time per launch of an eager forward pass: per kernel and per nn.Module call
(opmodel.validation.host_time), by hand."""

from __future__ import annotations

import pytest

from opmodel.validation.host_time import MODULE_CALLS, HostTime, fit_host_time, host_gap_s
from opmodel.validation.launch_queue import pass_time_s


def test_module_calls_spread_over_the_launches() -> None:
    host = HostTime(launch_gap_s=10e-6, module_call_s=4e-6)
    # GPT-2: 161 module calls (1 + 2 + 1 + 12 x 13 + 1) over 242 launches
    assert MODULE_CALLS["gpt2"] == 161
    assert host_gap_s(host, "gpt2", 242) == pytest.approx(10e-6 + 4e-6 * 161 / 242)
    assert host_gap_s(host, "unknown", 242) == 10e-6  # no count: no module time
    assert host_gap_s(host, "gpt2", 0) == 10e-6


def test_two_families_pin_both_host_times() -> None:
    """Two host-bound passes of 1 µs kernels: BERT's 443 module calls over 443 launches (one a
    launch) measured at 30 µs a launch, and ResNet-101's 353 over 100 launches (3.53 a launch)
    at 50 µs a launch. With ``g + m c`` a launch: ``g + m = 30`` and ``g + 3.53 m = 50`` µs, so
    ``m = 20 / 2.53 = 7.9`` µs and ``g = 22.1`` µs."""
    assert (MODULE_CALLS["bert"], MODULE_CALLS["resnet101"]) == (443, 353)
    bert = ([1e-6] * 443, "bert", 443 * 30e-6 + 1e-6)
    resnet = ([1e-6] * 100, "resnet101", 100 * 50e-6 + 1e-6)
    m = 20e-6 / (353 / 100 - 1)
    host = fit_host_time([bert, resnet])
    assert host.module_call_s == pytest.approx(m, rel=0.03)
    assert host.launch_gap_s == pytest.approx(30e-6 - m, rel=0.02)
    for latencies, family, measured in (bert, resnet):  # the queue reproduces both passes
        gap = host_gap_s(host, family, len(latencies))
        assert pass_time_s(latencies, gap) == pytest.approx(measured, rel=0.01)


def test_no_passes_is_an_error() -> None:
    with pytest.raises(ValueError, match="no passes"):
        fit_host_time([])
