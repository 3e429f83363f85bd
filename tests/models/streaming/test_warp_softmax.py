"""The warp softmax's loads-in-flight calibration: the shipped file, its training rows, the
fallback for sizes it does not list and malformed files (the effect on the chain is tested in
test_streaming.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel.core.errors import ConfigError
from opmodel.models.streaming.warp_softmax import (
    LOADS_FILE,
    is_warp_softmax,
    load_warp_softmax_loads,
    loads_in_flight,
)


def test_shipped_calibration_names_its_training_rows() -> None:
    calibration = load_warp_softmax_loads(LOADS_FILE)
    assert (calibration.hardware, calibration.source) == ("h200_sxm", "opmodel-measure")
    assert set(calibration.by_element_bytes) == {2, 4}
    assert calibration.is_training_row("h200_sxm", "opmodel-measure", 512, 2048, 2)
    assert not calibration.is_training_row("h200_sxm", "opmodel-measure", 1024, 2048, 2)
    assert not calibration.is_training_row("h200_sxm", "opmodel-measure", 1, 4096, 2)  # block
    assert not calibration.is_training_row("rtx3090", "liger", 1, 1024, 2)
    assert not calibration.is_training_row("h200_sxm", "opmodel-measure", 1, 512, 8)  # fp64


def test_sizes_not_listed_wait_for_each_load() -> None:
    assert loads_in_flight(8) == 1.0 and loads_in_flight(1) == 1.0
    assert loads_in_flight(2) == load_warp_softmax_loads(LOADS_FILE).by_element_bytes[2]


def test_atens_dispatch_to_the_warp_softmax() -> None:
    """host_softmax: at most 2048 elements and 8192 bytes per row."""
    assert is_warp_softmax(2048, 2) and is_warp_softmax(2048, 4)
    assert not is_warp_softmax(4096, 2) and not is_warp_softmax(2048, 8)
    assert is_warp_softmax(1024, 8) and is_warp_softmax(1, 2)


_GOOD_HEAD = "fitted_on: {hardware: h, source: s, max_rows: 512}\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("fitted_on: {hardware: h, source: s, max_rows: 1}\n", "needs the fields"),
        (
            "fitted_on: {hardware: h, max_rows: 1}\nloads_in_flight: {2: 2.0}\n",
            "fitted_on: needs string fields hardware, source",
        ),
        (
            "fitted_on: {hardware: h, source: s, max_rows: 0}\nloads_in_flight: {2: 2.0}\n",
            "fitted_on.max_rows: must be an integer >= 1 (got 0)",
        ),
        (_GOOD_HEAD + "loads_in_flight: {}\n", "loads_in_flight: must map element sizes"),
        (_GOOD_HEAD + "loads_in_flight: {3: 2.0}\n", "loads_in_flight.3: element size must be"),
        (
            _GOOD_HEAD + "loads_in_flight: {2: 0.5}\n",
            "loads_in_flight.2: must be a finite number >= 1 (got 0.5)",
        ),
        (
            _GOOD_HEAD + "loads_in_flight: {2: true}\n",
            "loads_in_flight.2: must be a finite number >= 1 (got True)",
        ),
    ],
)
def test_malformed_calibration_is_a_one_line_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_warp_softmax_loads(path)
    assert str(path) in str(info.value) and message in str(info.value)
    assert "\n" not in str(info.value)
