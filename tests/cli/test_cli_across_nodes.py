"""The CLI on collectives across nodes: golden JSON of examples/across_nodes/ and the
one-line refusal of a config without NICs."""

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
