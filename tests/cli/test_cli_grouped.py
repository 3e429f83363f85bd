"""The CLI on a grouped GEMM (examples/grouped_gemm.yaml), against its golden output."""

from __future__ import annotations

import json

import pytest

from .test_cli import _assert_golden, effective_on_h100


def test_grouped_gemm_on_h100(capsys: pytest.CaptureFixture[str]) -> None:
    """examples/grouped_gemm.yaml (Mixtral's expert up-projection) through effective_roofline on
    the H100: a wgmma kernel whose grid counts each expert's own row tiles."""
    code, out, err = effective_on_h100(capsys, "grouped_gemm")
    assert (code, err) == (0, "")
    _assert_golden("effective_roofline_grouped_gemm_h100", out)
    profile = json.loads(out)
    assert profile["implementation"].startswith("effective_roofline/wgmma/")
    grid, kernel = profile["diagnostics"]["grid"], profile["diagnostics"]["kernel"]
    sizes = (612, 488, 530, 397, 701, 455, 420, 493)
    row_tiles = sum(-(-rows // kernel["cta_tile_m"]) for rows in sizes)
    assert grid["ctas"] == row_tiles * -(-28672 // kernel["cta_tile_n"])
