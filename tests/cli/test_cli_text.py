"""``opmodel predict --format text``: a golden summary and the flag's one-line error;
``opmodel hardware list --format text``: a golden table."""

from __future__ import annotations

import json

import pytest

from ..conftest import EXAMPLES
from .test_cli import GOLDEN, UPDATE, _run


@pytest.mark.parametrize(
    ("example", "hardware", "model"),
    [
        ("gemm", "h100_sxm", "effective_roofline"),
        ("attention_decode_varlen", "h100_sxm", "effective_roofline"),
        ("rmsnorm", "a100_80gb_sxm", "effective_roofline"),
        ("gemm", "gpu_generic", "roofline"),
    ],
)
def test_text_summary_is_golden(
    capsys: pytest.CaptureFixture[str], example: str, hardware: str, model: str
) -> None:
    op = str(EXAMPLES / f"{example}.yaml")
    argv = ("predict", "--hardware", hardware, "--op", op, "--model", model, "--format", "text")
    code, out, err = _run(capsys, *argv)
    assert (code, err) == (0, "")
    golden = GOLDEN / f"text_{example}_{hardware}_{model}.txt"
    if UPDATE:
        golden.write_text(out, encoding="utf-8")
    assert out == golden.read_text(encoding="utf-8")


def test_unknown_format_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    op = str(EXAMPLES / "gemm.yaml")
    code, out, err = _run(capsys, "predict", "--hardware", "a10", "--op", op, "--format", "xml")
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1
    assert "argument --format: invalid choice: 'xml' (choose from" in err


def test_hardware_list_text_is_golden(capsys: pytest.CaptureFixture[str]) -> None:
    """``opmodel hardware list --format text``: one aligned line per shipped config, the
    same figures as the JSON listing."""
    code, out, err = _run(capsys, "hardware", "list", "--format", "text")
    assert (code, err) == (0, "")
    golden = GOLDEN / "text_hardware_list.txt"
    if UPDATE:
        golden.write_text(out, encoding="utf-8")
    assert out == golden.read_text(encoding="utf-8")
    _, listing, _ = _run(capsys, "hardware", "list")
    assert len(out.splitlines()) == 1 + len(json.loads(listing))
    assert "h100_sxm        gpu   sm90" in out and "989 TFLOP/s" in out
