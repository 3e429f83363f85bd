"""What-if variants: load_hardware(overrides=...), ``extends:`` files and ``--set`` on the CLI."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from opmodel import ConfigError, UnsupportedDTypeError
from opmodel.cli import main
from opmodel.hardware import load_hardware
from opmodel.hardware.overrides import apply_overrides, merge_config, parse_assignment
from opmodel.models import get_model
from opmodel.parsing import load_op

REPO = Path(__file__).resolve().parents[2]
HBM = "memory.levels.hbm.bandwidth_bytes_per_s"


def test_override_changes_the_variant_only() -> None:
    base = load_hardware("h100_sxm")
    faster = load_hardware("h100_sxm", overrides={HBM: 2 * base.hbm.bandwidth_bytes_per_s})
    assert faster.hbm.bandwidth_bytes_per_s == 2 * base.hbm.bandwidth_bytes_per_s
    assert load_hardware("h100_sxm") is base  # the cache keeps the two apart
    assert load_hardware("h100_sxm", overrides={}) is base
    assert load_hardware("h100_sxm", overrides={HBM: 6.7e12}) is faster
    # a DRAM-bound norm gets faster, by less than 2x: its loads' latency stays
    op = load_op(REPO / "examples" / "rmsnorm.yaml")
    model = get_model("effective_roofline")
    ratio = model.predict(op, base).latency_s / model.predict(op, faster).latency_s
    assert 1.2 < ratio < 2.0


def test_derived_values_follow_the_edited_numbers() -> None:
    base = load_hardware("h100_sxm")
    bigger = load_hardware("h100_sxm", overrides={"compute.sm.sm_count": 264})
    for dtype, peak in base.compute.tensor_flops_per_s.items():  # units x rate x clock
        assert bigger.compute.tensor_flops_per_s[dtype] == pytest.approx(2 * peak)


def test_levels_by_name_or_position_and_none_removes() -> None:
    data = {"memory": {"levels": [{"name": "hbm", "size_bytes": 1}, {"name": "l2"}]}, "x": 1}
    out = apply_overrides(
        data, {"memory.levels.l2.size_bytes": 5, "memory.levels.0.size_bytes": 2, "x": None}
    )
    assert out == {
        "memory": {"levels": [{"name": "hbm", "size_bytes": 2}, {"name": "l2", "size_bytes": 5}]}
    }
    assert data["x"] == 1  # the input is not changed
    # a name picks its own item in a list that also holds other values
    assert apply_overrides({"l": [1, {"name": "a"}]}, {"l.a.x": 2}) == {
        "l": [1, {"name": "a", "x": 2}]
    }
    assert apply_overrides({}, {"utilization.tensor_fraction": 0.9}) == {
        "utilization": {"tensor_fraction": 0.9}
    }


def test_fitted_values_can_be_removed() -> None:
    assert load_hardware("h100_sxm").sustained_calibration is not None
    plain = load_hardware(
        "h100_sxm", overrides={"sustained_calibration": None, "power.energy_calibration": None}
    )
    assert plain.sustained_calibration is None and plain.calibration is None


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"memory.levels.l3.size_bytes": 1},
            r"h100_sxm\.yaml: override memory\.levels\.l3: no item named 'l3' here \(items: hbm, l2, smem, registers\)$",
        ),
        (
            {"compute.clock_hz.x": 1},
            r"override compute\.clock_hz\.x: cannot set a field inside a value",
        ),
        ({"compute..clock_hz": 1}, r"empty segment"),
        (
            {HBM: 6.7},
            r"\(with overrides\): memory\.levels\[0\]\.bandwidth_bytes_per_s: outside the plausible",
        ),
        (
            {"compute.sm.sm_cont": 1},
            r"\(with overrides\): compute\.sm\.sm_cont: unknown key; did you mean 'sm_count'",
        ),
        ({3: 1}, r"overrides: paths must be strings \(got 3\)"),
    ],
)
def test_bad_overrides_are_one_line_each(overrides: dict[object, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        load_hardware("h100_sxm", overrides=overrides)  # type: ignore[arg-type]
    assert "\n" not in str(info.value)


def test_overrides_must_be_a_mapping() -> None:
    with pytest.raises(ConfigError, match="overrides must map dotted paths to values"):
        load_hardware("h100_sxm", overrides=[(HBM, 1.0)])  # type: ignore[arg-type]


def test_parse_assignment_reads_yaml_values() -> None:
    assert parse_assignment(f"{HBM}=4.8e12") == (HBM, 4.8e12)
    assert parse_assignment("compute.sm.mma_shape_mnk=[16, 8, 16]")[1] == [16, 8, 16]
    assert parse_assignment("sustained_calibration=null") == ("sustained_calibration", None)
    assert parse_assignment(" name = my_gpu ") == ("name", "my_gpu")
    with pytest.raises(ConfigError, match=r"--set: expected PATH=VALUE, e\.g\. .* \(got 'x'\)$"):
        parse_assignment("x")
    with pytest.raises(ConfigError, match=r"--set name=: no value \(write null to remove"):
        parse_assignment("name=")


def test_merge_config_merges_levels_by_name() -> None:
    base = {"a": {"b": 1, "c": 2}, "levels": [{"name": "hbm", "x": 1}], "l": [1, 2]}
    child = {"a": {"c": 3}, "levels": [{"name": "hbm", "y": 2}, {"name": "l3"}], "l": [9]}
    assert merge_config(base, child) == {
        "a": {"b": 1, "c": 3},
        "levels": [{"name": "hbm", "x": 1, "y": 2}, {"name": "l3"}],
        "l": [9],
    }


def _variant(folder: Path, text: str, name: str = "variant.yaml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_extends_a_shipped_config_under_a_new_name(tmp_path: Path) -> None:
    path = _variant(
        tmp_path,
        "extends: h100_sxm\nname: h100_hbm3e\n"
        "memory:\n  levels:\n    - {name: hbm, size_bytes: 150.0e9, bandwidth_bytes_per_s: 4.8e12}\n",
    )
    spec = load_hardware(path)
    base = load_hardware("h100_sxm")
    assert spec.name == "h100_hbm3e" and spec.hbm.bandwidth_bytes_per_s == 4.8e12
    assert spec.hbm.latency_s == base.hbm.latency_s  # the rest of the level is the base's
    assert [level.name for level in spec.memory.levels] == [lv.name for lv in base.memory.levels]
    # the base's fitted values stay attached under the new name
    assert spec.sustained_calibration == base.sustained_calibration
    assert spec.calibration is not None


def test_extends_a_file_and_sees_its_changes(tmp_path: Path) -> None:
    base = _variant(tmp_path, "extends: gpu_generic\nname: mine\n", "mine.yaml")
    child = _variant(tmp_path, "extends: mine.yaml\ncompute: {clock_hz: 1.0e9}\n")
    assert load_hardware(child).name == "mine"
    base.write_text("extends: gpu_generic\nname: mine_renamed\n", encoding="utf-8")
    os.utime(base, ns=(1, 1))  # a new stamp, however fast the file system's clock
    assert load_hardware(child).name == "mine_renamed"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "extends: no_such_gpu\n",
            r"variant\.yaml: extends: unknown hardware config 'no_such_gpu'",
        ),
        (
            "extends: variant.yaml\n",
            r"variant\.yaml: extends: .* is already in the chain \(a cycle\)",
        ),
        ("extends: 3\n", r"extends: expected a shipped config name or a YAML path \(got 3\)"),
    ],
)
def test_bad_extends(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_hardware(_variant(tmp_path, text))


def test_cli_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    op = str(REPO / "examples" / "rmsnorm.yaml")
    args = ["predict", "--hardware", "h100_sxm", "--op", op, "--model", "effective_roofline"]
    assert main(args) == 0
    stock = json.loads(capsys.readouterr().out)["latency_s"]
    assert main([*args, "--set", f"{HBM}=6.7e12"]) == 0
    assert json.loads(capsys.readouterr().out)["latency_s"] < stock
    assert main([*args, "--set", "memory.levels.hbm.bandwidth=1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did you mean 'bandwidth_bytes_per_s'" in err
    assert main(["hardware", "show", "a10", "--set", "compute.sm.sm_count=80"]) == 0
    assert json.loads(capsys.readouterr().out)["compute"]["sm"]["sm_count"] == 80
    table, out = tmp_path / "ops.csv", tmp_path / "out.csv"
    table.write_text(
        "name,kind,phase,tensors,attrs\n"
        "n,rmsnorm,prefill,input:2048x4096:bf16;weight:4096:bf16;output:2048x4096:bf16,\n",
        encoding="utf-8",
    )
    sweep = ["sweep", "--ops", str(table), "--hardware", "h100_sxm", "--output", str(out)]
    assert main([*sweep, "--no-progress", "--workers", "1", "--set", f"{HBM}=6.7e12"]) == 0
    capsys.readouterr()
    swept = float(out.read_text(encoding="utf-8").splitlines()[1].split(",")[5])
    assert main([*sweep, "--no-progress", "--workers", "1"]) == 0
    assert swept < float(out.read_text(encoding="utf-8").splitlines()[1].split(",")[5])


def test_shipped_example_variant() -> None:
    spec = load_hardware(REPO / "examples" / "hardware" / "h100_hbm3e.yaml")
    base = load_hardware("h100_sxm")
    assert (spec.name, spec.hbm.bandwidth_bytes_per_s, spec.hbm.size_bytes) == (
        "h100_hbm3e",
        4.8e12,
        1.41e11,
    )
    assert spec.compute == base.compute and spec.level("l2") == base.level("l2")


def test_a_variant_without_an_fp32_vector_peak_refuses_attention() -> None:
    """A config may leave fp32 out; attention's softmax runs in fp32, so the kernel model
    says what is missing instead of dividing by zero (found by removing each field of each
    shipped config in turn, 2026-12-06)."""
    spec = load_hardware(
        "h100_sxm", overrides={"compute.vector_flops_per_cycle_per_unit.fp32": None}
    )
    op = load_op(REPO / "examples" / "attention_prefill.yaml")
    with pytest.raises(UnsupportedDTypeError, match="no fp32 vector throughput, which attention"):
        get_model("effective_roofline").predict(op, spec)


def test_hardware_check_lists_what_a_variant_changes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hardware", "check", str(REPO / "examples" / "hardware" / "h100_hbm3e.yaml")]) == 0
    changes = json.loads(capsys.readouterr().out)["changes"]
    assert changes == {
        "memory.levels.hbm.bandwidth_bytes_per_s": [3.35e12, 4.8e12],
        "memory.levels.hbm.size_bytes": [85899345920, 1.41e11],
        "name": ["h100_sxm", "h100_hbm3e"],
    }
    shipped = str(REPO / "src" / "opmodel" / "configs" / "hardware" / "a10.yaml")
    assert main(["hardware", "check", shipped]) == 0
    assert "changes" not in json.loads(capsys.readouterr().out)  # it extends nothing


def test_the_cache_evicts_the_least_recently_used_config() -> None:
    """A config loaded again stays cached while more variants than the cache holds come and
    go (it evicted the oldest insertion before, so a hot config could drop out between two
    loads of one test)."""
    from opmodel.hardware.loader import _CACHE_SIZE

    base = load_hardware("a10")
    for step in range(_CACHE_SIZE + 8):
        load_hardware("a10", overrides={"power.static_w": 10.0 + step})
        assert load_hardware("a10") is base
