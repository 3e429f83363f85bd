"""opmodel predict with the op given inline (--kind, --tensors, --phase, --attrs)."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_cli import EXAMPLES, _run


def test_predict_an_op_given_inline(capsys: pytest.CaptureFixture[str]) -> None:
    """--kind and --tensors (an op table's syntax) predict what the same op's file predicts."""
    base = ["predict", "--hardware", "h100_sxm", "--model", "effective_roofline"]
    code, from_file, _ = _run(capsys, *base, "--op", str(EXAMPLES / "gemm.yaml"))
    assert code == 0
    tensors = "input:4096x8192:bf16;weight:8192x32768:bf16;output:4096x32768:bf16"
    inline = ("--kind", "gemm", "--tensors", tensors, "--phase", "train_fwd")
    code, out, _ = _run(capsys, *base, *inline)
    assert code == 0 and json.loads(out) == json.loads(from_file)
    code, out, _ = _run(capsys, *base, *inline, "--attrs", '{"cta_tile_m": 128}')
    assert code == 0 and json.loads(out)["latency_s"] > 0
    for argv, message in (
        ((), "give --op FILE, or --kind and --tensors"),
        (("--kind", "gemm"), "give --op FILE, or --kind and --tensors"),
        (("--op", str(EXAMPLES / "gemm.yaml"), *inline), "not both ways"),
        (("--kind", "gemm", "--tensors", "input:4x8:bf16"), "command line: "),
        ((*inline, "--attrs", "{causal"), "command line: attrs: not valid JSON"),
    ):
        code, _, err = _run(capsys, *base, *argv)
        assert code == 2 and err.count("\n") == 1 and message in err, (argv, err)
