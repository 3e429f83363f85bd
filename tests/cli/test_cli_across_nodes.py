"""The CLI on collectives across nodes and in an NVSwitch: golden JSON of examples/across_nodes/
and examples/nvls/all_reduce_decode.yaml, and the one-line refusals of a config without NICs or
without NVLink SHARP."""

from __future__ import annotations

import json

import pytest

from ..conftest import EXAMPLES
from .test_cli import _assert_golden, _run, effective_on_h100


def test_collective_across_nodes_matches_golden(capsys: pytest.CaptureFixture[str]) -> None:
    """examples/across_nodes/: a data-parallel all-reduce, one rank in each of 16 H100 nodes
    (golden/effective_roofline_all_reduce_data_parallel_h100.json); the PCIe A100 config has
    no NICs and says so in one line."""
    example = "across_nodes/all_reduce_data_parallel"
    code, out, err = effective_on_h100(capsys, example)
    assert (code, err) == (0, "")
    _assert_golden("effective_roofline_all_reduce_data_parallel_h100", out)
    assert json.loads(out)["diagnostics"]["nodes"] == 16
    op = str(EXAMPLES / f"{example}.yaml")
    code, out, err = _run(capsys, "predict", "--hardware", "a100_40gb_pcie", "--op", op)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "no interconnect.network" in err


def test_nvls_all_reduce_matches_golden(capsys: pytest.CaptureFixture[str]) -> None:
    """examples/nvls/all_reduce_decode.yaml: a decode step's 1 MiB all-reduce in an H100 node's
    NVSwitch (golden/effective_roofline_all_reduce_nvls_h100.json): NCCL's 16 KiB chunks, one
    loop of 128 heads, 41 us (Azure's ND H100 v5 curve: 42.0 us at 1 MiB); the A100 has no
    NVLink SHARP and says so in one line."""
    code, out, err = effective_on_h100(capsys, "nvls/all_reduce_decode")
    assert (code, err) == (0, "")
    _assert_golden("effective_roofline_all_reduce_nvls_h100", out)
    profile = json.loads(out)
    assert profile["implementation"] == "effective_roofline/nccl-nvls"
    assert profile["diagnostics"]["chunk_bytes"] == 16384
    assert profile["latency_s"] == pytest.approx(41.3e-6, abs=0.1e-6)
    op = str(EXAMPLES / "nvls" / "all_reduce_decode.yaml")
    argv = ("predict", "--model", "effective_roofline", "--hardware", "a100_80gb_sxm", "--op", op)
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "needs interconnect.nvls_bandwidth_bytes_per_s" in err
