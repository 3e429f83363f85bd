"""The CLI on a collective over a TPU's ICI torus: golden JSON of examples/tpu/ and the
one-line refusal of its torus attrs on an NVLink config."""

from __future__ import annotations

import json

import pytest

from ..conftest import EXAMPLES
from .test_cli import _assert_golden, _run


def test_ici_all_gather_matches_golden(capsys: pytest.CaptureFixture[str]) -> None:
    """examples/tpu/all_gather_ici.yaml: a 64 MiB all-gather over a 4x4x4 v5p cube, 63/64 of it
    over each chip's six links at 86.5 GB/s, 5 us + 127.3 us
    (golden/effective_roofline_all_gather_ici_tpu_v5p.json); on h100_sxm its torus attrs are
    refused in one line."""
    op = str(EXAMPLES / "tpu" / "all_gather_ici.yaml")
    argv = ("predict", "--model", "effective_roofline", "--op", op)
    code, out, err = _run(capsys, *argv, "--hardware", "tpu_v5p")
    assert (code, err) == (0, "")
    _assert_golden("effective_roofline_all_gather_ici_tpu_v5p", out)
    profile = json.loads(out)
    assert profile["implementation"] == "effective_roofline/ici-ring-3d"
    assert profile["latency_s"] == pytest.approx(5e-6 + 63 / 64 * 2**26 / 6 / 86.5e9)
    code, out, err = _run(capsys, *argv, "--hardware", "h100_sxm")
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "has link_type nvlink" in err
