"""The CLI on a collective over MI300X's xGMI mesh: golden JSON of examples/all_reduce.yaml on
``mi300x`` and the one-line refusal of NVLink SHARP there."""

from __future__ import annotations

import json

import pytest

from ..conftest import EXAMPLES
from .test_cli import _assert_golden, _run


def test_xgmi_all_reduce_matches_golden(capsys: pytest.CaptureFixture[str]) -> None:
    """examples/all_reduce.yaml: 64 MiB of bf16 over 8 MI300Xs, 117,440,512 B a rank over the
    seven links at RCCL's 336 GB/s with Simple's 56 us (golden/effective_roofline_all_reduce_
    xgmi_mi300x.json); ``algorithm: nvls`` is refused in one line (no NVSwitch)."""
    op = str(EXAMPLES / "all_reduce.yaml")
    argv = ("predict", "--model", "effective_roofline", "--op", op, "--hardware", "mi300x")
    code, out, err = _run(capsys, *argv)
    assert (code, err) == (0, "")
    _assert_golden("effective_roofline_all_reduce_xgmi_mi300x", out)
    profile = json.loads(out)
    assert profile["implementation"] == "effective_roofline/nccl-ring-simple"
    assert profile["latency_s"] == pytest.approx(56e-6 + 117_440_512 / 336e9)
    inline = ("--kind", "collective", "--tensors", "input:33554432:bf16;output:33554432:bf16")
    attrs = '{"operation": "all_reduce", "ranks": 8, "algorithm": "nvls"}'
    code, out, err = _run(
        capsys, "predict", "--model", "effective_roofline", *inline, "--attrs", attrs,
        "--hardware", "mi300x",
    )  # fmt: skip
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "nvls_bandwidth_bytes_per_s" in err
