"""The CLI: golden JSON for every example, listings, and one-line errors with exit status 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from opmodel.cli import main

from ..conftest import EXAMPLES

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("OPMODEL_UPDATE_GOLDEN") == "1"


def _assert_golden(name: str, out: str) -> None:
    """Compare CLI JSON with ``golden/NAME.json`` (rewritten when OPMODEL_UPDATE_GOLDEN=1)."""
    golden = GOLDEN / f"{name}.json"
    if UPDATE:
        golden.write_text(out)
    assert json.loads(out) == json.loads(golden.read_text())


def effective_on_h100(capsys: pytest.CaptureFixture[str], example: str) -> tuple[int, str, str]:
    """``opmodel predict --model effective_roofline --hardware h100_sxm`` on an example."""
    op = str(EXAMPLES / f"{example}.yaml")
    return _run(
        capsys, "predict", "--model", "effective_roofline", "--hardware", "h100_sxm", "--op", op
    )


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run the CLI in-process; argparse usage errors exit through SystemExit."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.stem)
def test_predict_matches_golden(capsys: pytest.CaptureFixture[str], example: Path) -> None:
    code, out, err = _run(capsys, "predict", "--hardware", "a100_40gb_pcie", "--op", str(example))
    assert (code, err) == (0, "")
    _assert_golden(example.stem, out)


def test_seed_command_on_a_config_path(capsys: pytest.CaptureFixture[str]) -> None:
    config = Path(__file__).resolve().parents[2] / "src/opmodel/configs/hardware/gpu_generic.yaml"
    code, out, _ = _run(
        capsys,
        "predict",
        "--hardware",
        str(config),
        "--op",
        str(EXAMPLES / "gemm.yaml"),
        "--model",
        "roofline",
    )
    assert code == 0
    assert json.loads(out)["implementation"] == "roofline/tensor"


def test_models_and_hardware_listings(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "models")
    assert code == 0 and "roofline" in {m["name"] for m in json.loads(out)}
    code, out, _ = _run(capsys, "hardware", "list")
    rows = {row["name"]: row for row in json.loads(out)}
    assert code == 0 and rows["a10"]["hbm_bandwidth_bytes_per_s"] == 6.0e11
    pcie = rows["a100_40gb_pcie"]
    assert (pcie["tdp_w"], pcie["sustained_calibration"]) == (
        250.0,
        "a100_40gb_pcie_sustained.yaml",
    )
    assert pcie["power_limited_clock_hz"] == pytest.approx(0.996e9, rel=1e-3)
    assert rows["a10"]["power_limited_clock_hz"] is None
    code, out, _ = _run(capsys, "hardware", "show", "h100_sxm")
    assert code == 0 and json.loads(out)["compute"]["sm"]["sm_count"] == 132


def test_hardware_check(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nkind: gpu\n")
    code, out, err = _run(capsys, "hardware", "check", str(bad))
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"opmodel: {bad}: compute: missing required field",
        f"opmodel: {bad}: memory: missing required field",
        f"opmodel: {bad}: power: missing required field",
        f"opmodel: {bad}: overhead: missing required field",
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["predict", "--hardware", "a1O", "--op", "x.yaml"],
            "opmodel: unknown hardware config 'a1O'; did you mean 'a10'? (valid: ",
        ),
        (
            ["predict", "--hardware", "a10", "--op", "missing.yaml"],
            "opmodel: missing.yaml: file not found",
        ),
        (
            ["predict", "--hardware", "a10", "--op", "x.yaml", "--model", "rooflin"],
            "opmodel: unknown model 'rooflin'; did you mean 'roofline'? (valid: ",
        ),
        (
            [
                "predict",
                "--hardware",
                "tpu_generic",
                "--op",
                str(EXAMPLES / "reduction.yaml"),
                "--compact",
            ],
            "opmodel: error: unrecognized arguments: --compact",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = _run(capsys, *argv)
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1
    assert err.startswith(message)


def test_console_script_runs_without_traceback() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "opmodel.cli", "predict", "--hardware", "nope", "--op", "x.yaml"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1


def test_seed_extended_roofline_command(capsys: pytest.CaptureFixture[str]) -> None:
    """The seed's command: predict --model extended_roofline on a10 with explicit kernel attrs."""
    config = Path(__file__).resolve().parents[2] / "src/opmodel/configs/hardware/a10.yaml"
    code, out, err = _run(
        capsys,
        "predict",
        "--model",
        "extended_roofline",
        "--hardware",
        str(config),
        "--op",
        str(EXAMPLES / "gemm_extended_roofline.yaml"),
    )
    assert (code, err) == (0, "")
    _assert_golden("extended_roofline_gemm_a10", out)
    assert len(out) < 20_000  # readable default output
    assert json.loads(out)["diagnostics"]["kernel"]["cta_tile_m"] == 128


@pytest.mark.parametrize(
    ("example", "golden"),
    [
        ("gemm_extended_roofline", "effective_roofline_gemm_a10"),
        ("gemm", "effective_roofline_selected_gemm_a10"),
    ],
)
def test_seed_effective_roofline_command(
    capsys: pytest.CaptureFixture[str], example: str, golden: str
) -> None:
    """The seed's effective_roofline command, with explicit kernel attrs and with selection."""
    config = Path(__file__).resolve().parents[2] / "src/opmodel/configs/hardware/a10.yaml"
    code, out, err = _run(
        capsys,
        "predict",
        "--model",
        "effective_roofline",
        "--hardware",
        str(config),
        "--op",
        str(EXAMPLES / f"{example}.yaml"),
    )
    assert (code, err) == (0, "")
    _assert_golden(golden, out)
    assert len(out) < 20_000  # readable default output
    assert json.loads(out)["implementation"].startswith("effective_roofline/mma_sync/")


def test_validate_gemm_traffic(capsys: pytest.CaptureFixture[str]) -> None:
    data = Path(__file__).resolve().parents[2] / "data"
    code, out, err = _run(capsys, "validate-gemm-traffic", "--data-dir", str(data))
    assert code == 0
    assert json.loads(out)["rows"] == 48
    assert len(err.splitlines()) == 49  # header + one line per row
    code, out, err = _run(capsys, "validate-gemm-traffic", "--data-dir", "/nonexistent")
    assert code == 2 and "file not found" in err and len(err.splitlines()) == 1


_KERNEL_KINDS = (
    *("softmax", "layernorm", "rmsnorm", "rmsnorm_warm", "rope", "elementwise", "reduction"),
    "bias_grad",
    "argmax",
    "swiglu_liger",
    "rmsnorm_residual",
    *("embedding", "embedding_backward", "copy", "layernorm_backward", "all_reduce", "optimizer"),
    "causal_where",
    "silu_strided",
    *(
        f"attention_{k}"
        for k in ("prefill", "prefill_packed", "decode", "decode_mla", "decode_varlen", "backward")
    ),
)


@pytest.mark.parametrize("example", _KERNEL_KINDS)
def test_effective_roofline_kernel_models_match_golden(
    capsys: pytest.CaptureFixture[str], example: str
) -> None:
    """Every non-GEMM example through effective_roofline's streaming, attention and NCCL models on
    the H100 (golden/effective_roofline_<example>_h100.json)."""
    code, out, err = effective_on_h100(capsys, example)
    assert (code, err) == (0, "")
    _assert_golden(f"effective_roofline_{example}_h100", out)
    profile = json.loads(out)
    assert profile["implementation"].startswith(
        (
            "effective_roofline/streaming/",
            "effective_roofline/fa3/",
            "effective_roofline/fa3_bwd/",
            "effective_roofline/splitkv/",
            "effective_roofline/flashmla/",
            "effective_roofline/nccl-ring-",
            "effective_roofline/nccl-nvls",
        )
    )
    parts = profile["energy"]
    total = (
        parts["tensor_j"] + parts["vector_j"] + sum(parts["memory_j"].values()) + parts["static_j"]
    )
    assert total == pytest.approx(profile["energy_j"])


@pytest.mark.parametrize(
    "command",
    [
        ("validate-gemm-latency", "--limit", "20", "--output-csv"),
        ("validate-gemm-latency", "--limit", "20", "--output-params"),
        ("validate-ops", "--limit", "20", "--output-csv"),
    ],
)
def test_output_in_a_missing_folder_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: tuple[str, ...]
) -> None:
    data = Path(__file__).resolve().parents[2] / "data"
    target = tmp_path / "missing" / "out.csv"
    name, *rest = command
    code, _, err = _run(capsys, name, "--data-dir", str(data), *rest, str(target))
    assert code == 2
    assert err.strip().splitlines()[-1] == f"opmodel: {target}: No such file or directory"


def test_predict_at_a_clock_or_in_burst(capsys: pytest.CaptureFixture[str]) -> None:
    """``--clock-hz`` locks the SM clock; ``--power-state burst`` runs an unlocked H100 at its
    burst power-limited clock (1595 MHz for a fully busy kernel, against 1455 sustained), so a
    compute-bound GEMM runs faster; asking for both is a one-line error."""
    gemm = str(EXAMPLES / "gemm.yaml")
    base = ("predict", "--hardware", "h100_sxm", "--op", gemm, "--model", "effective_roofline")
    runs = {}
    for extra in ((), ("--power-state", "burst"), ("--clock-hz", "1.2e9")):
        code, out, _ = _run(capsys, *base, *extra)
        assert code == 0
        profile = json.loads(out)
        runs[extra[-1] if extra else "sustained"] = (
            profile["latency_s"],
            profile["diagnostics"]["sm_clock_hz"],
        )
    assert runs["burst"][1] > runs["sustained"][1]
    assert runs["burst"][0] < runs["sustained"][0]
    assert runs["1.2e9"][1] == 1.2e9
    code, out, err = _run(capsys, *base, "--power-state", "burst", "--clock-hz", "1.2e9")
    assert (code, out) == (2, "")
    assert err == (
        "opmodel: --power-state burst applies to an unlocked device; --clock-hz locks the clock\n"
    )
