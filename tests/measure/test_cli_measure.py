"""``opmodel measure`` on the command line: the dry run, and one-line errors with exit status 2."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from opmodel.cli import main
from opmodel.cli_measure import stoppable
from opmodel.measure import MeasureRequest, dry_run


def test_dry_run_prints_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["measure", "--grid", "h200_8min", "--hardware", "h200_sxm", "--dry-run"]) == 0
    summary = json.loads(capsys.readouterr().out)
    expected = dry_run(MeasureRequest(grid="h200_8min", hardware="h200_sxm")).summary()
    assert summary == expected
    assert summary["grid"] == "h200_8min" and summary["estimate_model"] == "effective_roofline"
    assert sum(summary["cases_by_kind"].values()) == summary["cases"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--grid", "h200_8min", "--hardware", "h200_sxm"], "one of the arguments"),
        (["--grid", "nope", "--hardware", "h200_sxm", "--dry-run"], "measurement grid"),
        (["--grid", "h200_8min", "--hardware", "h300", "--dry-run"], "h300"),
        (
            ["--grid", "h200_8min", "--hardware", "h200_sxm", "--dry-run", "--device", "-1"],
            "CUDA device index",
        ),
        (
            [
                "--grid",
                "h200_8min",
                "--hardware",
                "h200_sxm",
                "--output-dir",
                "o",
                "--lock-sm-clock-mhz",
                "0",
            ],
            "positive clock",
        ),
    ],
)
def test_bad_arguments_are_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], expected: str
) -> None:
    with pytest.raises(SystemExit) as info:
        code = main(["measure", *args])
        raise SystemExit(code)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert expected in err and len(err.strip().splitlines()) == 1


def test_without_pytorch_says_what_to_install(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch -> ImportError
    args = ["measure", "--grid", "h200_8min", "--hardware", "h200_sxm"]
    assert main([*args, "--output-dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        "opmodel: opmodel measure needs PyTorch and nvidia-ml-py: pip install 'opmodel[measure]'"
    )
    assert not (tmp_path / "out").exists()


def test_sigterm_and_sigint_interrupt_the_grid_then_handlers_are_restored() -> None:
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    for sig in (signal.SIGTERM, signal.SIGINT):
        with pytest.raises(KeyboardInterrupt), stoppable():
            os.kill(os.getpid(), sig)
            time.sleep(1)  # the handler runs before this returns
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before
