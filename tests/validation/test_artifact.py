"""validate-artifact, workload mode: op-list mapping, run selection, pass sums by hand, CLI."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from opmodel import DType, OpKind
from opmodel.cli import main
from opmodel.core.errors import ConfigError
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.validation.artifact import (
    MIN_WINDOW_S,
    calibration_split,
    load_runs,
    predict_runs,
)
from opmodel.validation.artifact_kernels import complete_entries, kernels_from_entry
from opmodel.validation.artifact_ops import op_from_entry
from opmodel.validation.artifact_perop import load_measured_ops

REPO = Path(__file__).resolve().parents[2]
GEMM = {"batch": 1, "dimM": 256, "dimN": 768, "dimK": 768, "precM": "bf16", "precA": "bf16"}
OPS = [
    [GEMM, ["gemm", "tc", "bf16_bf16"]],
    [{"batch": 24, "dimM": 128, "dimN": 128, "dimK": 64, "precM": "bf16"}, ["gemm", "tc"]],
    [{"batch": 3072, "dim": 128, "prec": "fp32"}, ["softmax", "fp32"]],
    [{"batch": 256, "dim": 768, "prec": "bf16"}, ["layernorm", "bf16"]],
    [{"dim": 196608, "op": "pointwise_add", "prec": "bf16"}, ["elementwise"]],
    [{"dim": 786432, "op": "typecast_to_fp32", "prec": "bf16"}, ["elementwise"]],
    [{"dim": 10, "op": "mystery", "prec": "bf16"}, ["elementwise"]],
]
# ResNet's 3 x 3 convolution of 8 x 128 x 28 x 28 into 128 channels, stride 1, padding 1: the
# implicit GEMM is (8 x 28 x 28) x 128 x (128 x 9)
CONV = {
    **GEMM,
    **{"dimM": 6272, "dimN": 128, "dimK": 1152, "b": 8, "m": 128, "c": 128, "hw": 28, "rs": 3},
    **{"stride": 1, "padding": 1, "useTensorCore": True},
}


def test_entries_map_to_ops() -> None:
    gemm = op_from_entry(OPS[0])
    assert gemm.kind is OpKind.GEMM and [t.shape for t in gemm.tensors] == [
        (256, 768),
        (768, 768),
        (256, 768),
    ]
    assert op_from_entry(OPS[1]).kind is OpKind.BATCHED_GEMM
    softmax = op_from_entry(OPS[2])
    assert softmax.kind is OpKind.SOFTMAX and softmax.tensors[0].dtype is DType.FP32
    assert softmax.attrs["implementation"] == "pytorch"
    assert len(op_from_entry(OPS[3]).tensors) == 4  # x, gamma, beta, y
    add = op_from_entry(OPS[4])
    assert (add.kind, add.attrs["function"], len(add.tensors)) == (OpKind.ELEMENTWISE, "add", 3)
    cast = op_from_entry(OPS[5])
    assert cast.kind is OpKind.COPY and cast.tensors[1].dtype is DType.FP32
    with pytest.raises(ValueError, match="elementwise op 'mystery' is not mapped"):
        op_from_entry(OPS[6])
    with pytest.raises(ValueError, match="dimK must be a positive integer"):
        op_from_entry([{**GEMM, "dimK": 0}, ["gemm"]])
    with pytest.raises(ValueError, match="op kind 'pool' is not mapped"):
        op_from_entry([{}, ["pool"]])


def test_eager_attention_bmm_copies_its_operands_and_context() -> None:
    """torch.matmul folds a 4-D bmm's batch with reshape, which copies the head-split Q, K
    (scores) and V (context); merging the heads copies the context. Sizes by hand for 2 x 12
    heads, 512 tokens, head size 64: each copy moves 24 x 512 x 64 elements once each way."""
    scores = {"batch": 24, "dimM": 512, "dimN": 512, "dimK": 64, "precM": "bf16"}
    context = {"batch": 24, "dimM": 512, "dimN": 64, "dimK": 512, "precM": "bf16"}
    names = {
        "scores": [op.name for op in kernels_from_entry([scores, ["gemm"]]).kernels],
        "context": [op.name for op in kernels_from_entry([context, ["gemm"]]).kernels],
    }
    assert names == {
        "scores": ["query_copy", "key_copy", "gemm"],
        "context": ["value_copy", "gemm", "context_copy"],
    }
    for entry in (scores, context):
        for op in kernels_from_entry([entry, ["gemm"]]).kernels:
            if op.kind is OpKind.COPY:
                assert [t.shape for t in op.tensors] == [(24 * 512 * 64,)] * 2
                assert op.tensors[0].dtype is DType.BF16
    # a linear layer (batch 1) and a bmm of another shape launch the GEMM alone
    assert len(kernels_from_entry(OPS[0]).kernels) == 1
    other = {"batch": 4, "dimM": 256, "dimN": 512, "dimK": 512, "precM": "bf16"}
    assert len(kernels_from_entry([other, ["gemm"]]).kernels) == 1


def test_gpt2_score_division_is_followed_by_the_causal_where() -> None:
    """The lists' 'unspecified_tensor' (GPT-2's division of the scores by a 0-dim tensor) reads
    one full-size operand, and the causal torch.where that follows it, which the lists leave
    out, reads and writes the scores once more: two one-input kernels in one slot."""
    entry = [{"dim": 196608, "op": "unspecified_tensor", "prec": "bf16"}, ["elementwise"]]
    kernels = kernels_from_entry(entry).kernels
    assert [op.name for op in kernels] == ["unspecified_tensor", "causal_where"]
    for op in kernels:
        assert op.kind is OpKind.ELEMENTWISE
        assert [t.shape for t in op.tensors] == [(196608,), (196608,)]


def test_resnet_entries_gain_batch_norms_and_residual_adds() -> None:
    """torchvision's ResNet: a batch norm after every convolution (its output's size), and a
    residual add before every third ReLU after the stem's; other families are unchanged."""
    conv = [{**CONV, "dimM": 100, "dimN": 8}, ["conv2d", "tc", "bf16_bf16"]]
    relu = [{"dim": 800, "op": "relu", "prec": "bf16"}, ["elementwise"]]
    block = [conv, relu, conv, relu, conv, conv, relu]  # conv3 and the downsample, then add
    entries = [conv, relu, *block, *block]
    done = complete_entries(entries, "resnet101")
    names = [e[1][0] if e[1][0] != "elementwise" else e[0]["op"] for e in done]
    assert names.count("batch_norm_eval") == 9 and names.count("pointwise_add") == 2
    assert names[:3] == ["conv2d", "batch_norm_eval", "relu"]
    assert names[-3:] == ["batch_norm_eval", "pointwise_add", "relu"]
    norms = [e for e in done if e[0].get("op") == "batch_norm_eval"]
    assert {e[0]["dim"] for e in norms} == {800}
    (norm,) = kernels_from_entry(norms[0]).kernels
    assert norm.kind is OpKind.ELEMENTWISE and [t.shape for t in norm.tensors] == [(800,)] * 2
    assert complete_entries(entries, "gpt2") is entries


def _ew(op: str, dim: int, prec: str) -> list[Any]:
    return [{"dim": dim, "op": op, "prec": prec}, ["elementwise"]]


def test_qwen2_rms_norms_gain_their_casts_and_mean() -> None:
    """Qwen2's RMSNorm (transformers 4.51.3) casts to fp32, takes the mean of the squares per
    row and casts back before the weight's multiply; the lists keep only the pow, add, rsqrt
    and the two multiplies. 6 rows of 4 elements: 24 and 6."""
    norm = [
        _ew("unspecified_scalar", 24, "fp32"),
        _ew("scalar_add", 6, "fp32"),
        _ew("unspecified_scalar", 6, "fp32"),
        _ew("pointwise_mul", 24, "fp32"),
        _ew("scalar_mul", 24, "bf16"),
    ]
    gemm = [GEMM, ["gemm", "tc", "bf16_bf16"]]
    entries = [gemm, *norm, gemm, _ew("pointwise_add", 24, "bf16"), *norm]
    done = complete_entries(entries, "qwen2")
    assert len(done) == len(entries) + 6
    names = [e[0]["op"] if e[1][0] == "elementwise" else e[1][0] for e in done]
    assert names[:9] == [
        "gemm",
        "typecast_to_fp32",
        "unspecified_scalar",
        "reduction",
        "scalar_add",
        "unspecified_scalar",
        "pointwise_mul",
        "typecast_to_bf16",
        "scalar_mul",
    ]
    (mean,) = kernels_from_entry(done[3]).kernels
    assert mean.kind is OpKind.REDUCTION and mean.attrs["function"] == "mean"
    assert [t.shape for t in mean.tensors] == [(6, 4), (6,)]
    (cast,) = kernels_from_entry(done[1]).kernels
    assert cast.kind is OpKind.COPY
    assert [t.dtype for t in cast.tensors] == [DType.BF16, DType.FP32]
    # not a norm: the per-row add must divide the elements into rows of more than one
    odd = [_ew("unspecified_scalar", 24, "fp32"), _ew("scalar_add", 24, "fp32"), *norm[2:]]
    assert complete_entries(odd, "qwen2") == odd
    assert complete_entries(entries, "opt") is entries


def test_conv2d_runs_layout_transforms_around_its_gemm() -> None:
    """A tensor-core conv2d of NCHW tensors: input and filter to NHWC / KRSC, the implicit GEMM,
    the output back to NCHW; each transform reads and writes its tensor once."""
    launched = kernels_from_entry([CONV, ["conv2d", "tc", "bf16_bf16"]])
    assert launched.op.kind is OpKind.GEMM and launched.kernels[2] is launched.op
    names = [op.name for op in launched.kernels]
    assert names == ["nchw_to_nhwc", "kcrs_to_krsc", "conv2d", "nhwc_to_nchw"]
    elements = [op.tensors[0].shape for op in launched.kernels if op.kind is OpKind.COPY]
    assert elements == [(8 * 128 * 28 * 28,), (128 * 128 * 9,), (6272 * 128,)]
    transforms = [op for op in launched.kernels if op.kind is OpKind.COPY]
    assert all(op.tensors[0].dtype is op.tensors[1].dtype is DType.BF16 for op in transforms)
    # without its convolution fields a conv2d entry is the GEMM alone; a GEMM entry always is
    bare = {k: v for k, v in CONV.items() if k not in ("b", "c", "hw", "m", "rs")}
    assert len(kernels_from_entry([bare, ["conv2d"]]).kernels) == 1
    assert len(kernels_from_entry(OPS[0]).kernels) == 1
    with pytest.raises(ValueError, match=r"conv2d m=64, c=128, rs=3 do not match its GEMM"):
        kernels_from_entry([{**CONV, "m": 64}, ["conv2d"]])
    with pytest.raises(ValueError, match="hw must be a positive integer"):
        kernels_from_entry([{**CONV, "hw": 0}, ["conv2d"]])


@pytest.fixture
def artifact(tmp_path: Path) -> Path:
    root = tmp_path / "energaizer"
    (root / "workloads" / "all").mkdir(parents=True)
    (root / "measurements" / "a100").mkdir(parents=True)
    (root / "workloads" / "all" / "tinymodel_x_pbf16_b1_s128_modeprefill.json").write_text(
        json.dumps([*OPS, [CONV, ["conv2d", "tc", "bf16_bf16"]]])
    )
    rows = [
        "workload,energy,time,avg_freq,temp",
        "tinymodel_x_pbf16_b1_s128_modeprefill_attneager_freq900_iter3000.csv,0.5,10.0,900.0,60",
        "tinymodel_x_pfp32_b1_s128_modeprefill_freq900_iter3000.csv,0.5,10.0,900.0,60",
        "tinymodel_x_pbf16_b1_s128_modeprefill_freq900_iter100.csv,0.1,10.0,900.0,60",
        "othermodel_y_pbf16_b1_s128_modeprefill_freq900_iter3000.csv,0.5,10.0,900.0,60",
    ]
    (root / "measurements" / "a100" / "nvml_parsed.csv").write_text("\n".join(rows) + "\n")
    return root


def test_run_selection(artifact: Path) -> None:
    runs, skipped = load_runs(artifact)
    assert [r.workload for r in runs] == ["tinymodel_x_pbf16_b1_s128_modeprefill"]
    run = runs[0]
    assert (run.hardware, run.clock_hz, run.family, run.passes) == (
        "a100_40gb_pcie",
        900e6,
        "tiny",
        3000,
    )
    # the failed run (10 ms x 100 passes = 1 s, 0.1 J x 100 = 10 J) is the start-up, which comes
    # off the 30 s, 1500 J window of 3000 passes
    assert (run.startup_s, run.startup_j) == (pytest.approx(1.0), pytest.approx(10.0))
    assert run.time_s == pytest.approx((30.0 - 1.0) / 3000)
    assert run.energy_j == pytest.approx((1500.0 - 10.0) / 3000)
    assert skipped == {
        "not bf16 (no op list)": 1,
        "measurement window under 10 s (failed run)": 1,  # 10 ms x 100 passes = 1 s
        "no op list for the workload": 1,
    }


def test_a_clock_sweep_is_its_own_set(artifact: Path) -> None:
    """measurements/a100_dvfs (the artifact's clock sweep) runs on the same config, at each
    run's measured clock, with its own start-up correction and the clock the harness asked
    for; its runs are reported as '<config>:dvfs' and never train a 900 MHz calibration."""
    sweep = artifact / "measurements" / "a100_dvfs"
    sweep.mkdir()
    rows = [
        "workload,energy,time,avg_freq,temp",
        "tinymodel_x_pbf16_b1_s128_modeprefill_attneager_freq1410_iter2000.csv,0.6,15.0,1219.7,74",
        "tinymodel_x_pbf16_b1_s128_modeprefill_attneager_freq510_iter500.csv,2.0,4.0,510.0,60",
    ]
    (sweep / "nvml_parsed.csv").write_text("\n".join(rows) + "\n")
    runs, _ = load_runs(artifact)
    (capped,) = [r for r in runs if r.sweep]
    assert (capped.label, capped.clock_hz, capped.requested_clock_mhz) == (
        "a100_40gb_pcie:dvfs",
        pytest.approx(1219.7e6),
        1410.0,
    )
    # its own failed run (4 ms x 500 = 2 s) is the start-up: (30 s - 2 s) / 2000 passes
    assert capped.time_s == pytest.approx((30.0 - 2.0) / 2000)
    (main_run,) = [r for r in runs if not r.sweep]
    assert main_run.label == "a100_40gb_pcie" and main_run.requested_clock_mhz == 900.0
    result = predict_runs([capped], "roofline")[0]
    assert calibration_split(result) == "held-out"  # carried to 1220 MHz by the voltage table


def test_no_failed_run_means_no_startup_correction(artifact: Path) -> None:
    """Without a failed run on that GPU there is no start-up measurement: the window is taken
    as passes alone."""
    path = artifact / "measurements" / "a100" / "nvml_parsed.csv"
    path.write_text(
        "".join(line for line in path.read_text().splitlines(True) if "iter100" not in line)
    )
    (run,) = load_runs(artifact)[0]
    assert (run.startup_s, run.startup_j) == (0.0, 0.0)
    assert (run.time_s, run.energy_j) == (pytest.approx(0.01), pytest.approx(0.5))


def test_malformed_numbers_are_skipped_and_counted(artifact: Path) -> None:
    """A row whose time, energy or clock is not a number is skipped with its reason and is no
    start-up measurement, even when its name would make it a failed run."""
    path = artifact / "measurements" / "a100" / "nvml_parsed.csv"
    bad = (
        "tinymodel_x_pbf16_b1_s128_modeprefill_freq900_iter100.csv,0.1,abc,900.0,60\n"
        "tinymodel_x_pbf16_b1_s128_modeprefill_freq900_iter100.csv,,10.0,900.0,60\n"
        "tinymodel_x_pbf16_b1_s128_modeprefill_freq900_iter100.csv,0.1,10.0,-1,60\n"
    )
    path.write_text(path.read_text() + bad)
    runs, skipped = load_runs(artifact)
    reason = "time, energy or avg_freq missing or not a number >= 0 (time and clock > 0)"
    assert skipped[reason] == 3
    (run,) = runs
    assert (run.startup_s, run.startup_j) == (pytest.approx(1.0), pytest.approx(10.0))


def test_pass_sums_by_hand(artifact: Path) -> None:
    runs, _ = load_runs(artifact)
    (result,) = predict_runs(runs, "roofline")
    spec = load_hardware("a100_40gb_pcie").at_clock(900e6)
    model, gap = get_model("roofline"), spec.overhead.kernel_launch_overhead_s
    slots = [
        [model.predict(op, spec) for op in kernels_from_entry(entry).kernels]
        for entry in [*OPS[:6], [CONV, ["conv2d"]]]
    ]
    assert [len(slot) for slot in slots] == [1, 3, 1, 1, 1, 1, 4]  # the bmm copies Q and K
    # the launch queue: entry i queued at i x gap, run in order; an entry's kernels (the
    # attention bmm's copies, the conv's transforms) come from one host call: one slot
    time_s = 0.0
    for i, slot in enumerate(slots, 1):
        time_s = max(time_s, i * gap) + sum(p.latency_s for p in slot)
    dynamic = sum(p.energy_j - spec.power.static_w * p.latency_s for s in slots for p in s)
    assert result.ops == 7 and result.skipped_ops == {"elementwise op 'mystery' is not mapped": 1}
    assert result.time_s == pytest.approx(time_s)
    assert spec.power.static_w == pytest.approx(47.35)  # EnergAIzer idle power at 900 MHz
    assert result.energy_j == pytest.approx(dynamic + 47.35 * time_s)
    # the GEMM and batched GEMM kernels' share of the kernel time (the conv runs as its GEMM;
    # the bmm's copies and the conv's transforms are copies)
    tensor = [
        p.latency_s
        for entry, slot in zip([*OPS[:6], [CONV, ["conv2d"]]], slots, strict=True)
        for op, p in zip(kernels_from_entry(entry).kernels, slot, strict=True)
        if op.kind.value in ("gemm", "batched_gemm")
    ]
    assert len(tensor) >= 2
    assert result.tensor_kernel_s == pytest.approx(sum(tensor))
    assert 0 < result.tensor_kernel_s < result.kernel_s


def test_cli_outputs(artifact: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_csv, out_svg = tmp_path / "runs.csv", tmp_path / "runs.svg"
    args = ["validate-artifact", "--workload-dir", str(artifact), "--format", "json"]
    assert main([*args, "--output-csv", str(out_csv), "--output-plot", str(out_svg)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["runs"] == 1 and summary["groups"]["a100_40gb_pcie"]["latency"]["count"] == 1
    with out_csv.open() as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["workload"] == "tinymodel_x_pbf16_b1_s128_modeprefill"
    assert float(row["time_ratio"]) == pytest.approx(
        float(row["predicted_time_s"]) / float(row["measured_time_s"]), rel=1e-5
    )
    assert out_svg.read_text().lstrip().startswith("<?xml")
    assert (tmp_path / "runs_energy_breakdown.svg").is_file()


def test_bad_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ConfigError, match="no workloads/all folder"):
        load_runs(tmp_path)
    assert main(["validate-artifact", "--workload-dir", str(tmp_path)]) == 2
    assert "no workloads/all folder" in capsys.readouterr().err


def test_shipped_data_runs(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["validate-artifact", "--workload-dir", str(REPO / "data" / "energaizer")]
    assert main([*args, "--model", "roofline", "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["runs"] > 100
    groups = summary["groups"]
    assert {"a10", "a100_40gb_pcie", "h100_sxm"} <= set(groups)
    # the H100 SXM5 set (data/energaizer/measurements/h100): 53 runs with an op list, at 1830 MHz
    assert groups["h100_sxm"]["latency"]["count"] == 53
    # the A100's clock sweep (data/energaizer/measurements/a100_dvfs), by requested clock
    assert groups["a100_40gb_pcie:dvfs"]["latency"]["count"] == 163
    for mhz in range(510, 1411, 90):
        assert groups[f"a100_40gb_pcie:dvfs:{mhz}MHz"]["latency"]["count"] >= 13
    for hardware in ("a10", "a100_40gb_pcie", "h100_sxm"):  # held-out runs, also by family
        by_family = [g for name, g in groups.items() if name.startswith(f"{hardware}:held-out:")]
        assert len(by_family) >= (4 if hardware == "h100_sxm" else 5)  # no vision models on H100
        count = sum(g["latency"]["count"] for g in by_family)
        assert count == groups[f"{hardware}:held-out"]["latency"]["count"]


def test_shipped_h100_runs() -> None:
    """measurements/h100 is EnergAIzer's H100 SXM5 at a locked 1830 MHz (config h100_sxm):
    56 bf16 language-model runs, 3 without an op list in the artifact, none failed, so no
    start-up correction (the windows keep their start-up: SOURCE.md)."""
    runs, _ = load_runs(REPO / "data" / "energaizer")
    h100 = [run for run in runs if run.hardware == "h100_sxm"]
    assert len(h100) == 53
    assert {run.family for run in h100} == {"bert", "gpt2", "opt", "qwen2"}
    assert all(run.clock_hz == pytest.approx(1830e6) and not run.sweep for run in h100)
    assert all(run.startup_s == 0.0 and run.startup_j == 0.0 for run in h100)
    assert all(run.time_s * run.passes >= MIN_WINDOW_S for run in h100)


def test_runs_csv_says_which_runs_trained_the_calibration(tmp_path: Path) -> None:
    out = tmp_path / "runs.csv"
    args = ["validate-artifact", "--workload-dir", str(REPO / "data" / "energaizer")]
    assert main([*args, "--model", "roofline", "--output-csv", str(out), "--format", "json"]) == 0
    with out.open() as handle:
        rows = list(csv.DictReader(handle))
    splits = {row["split"] for row in rows}
    assert splits == {"training", "held-out"}  # every measured device carries a calibration
    training = {(row["hardware"], row["workload"]) for row in rows if row["split"] == "training"}
    declared: set[tuple[str, str]] = set()
    for name in ("a10", "a100_40gb_pcie", "h100_sxm"):
        calibration = load_hardware(name).calibration
        assert calibration is not None
        declared |= {(name, run) for run in calibration.training_runs}
    assert training == declared


@pytest.fixture
def per_kernel(tmp_path: Path) -> Path:
    """EnergAIzer-style per-kernel files: GEMM/bmm, softmax, layernorm and attention rows."""
    root = tmp_path / "kernels"
    root.mkdir()
    (root / "yz8_gemm_freq900.csv").write_text(
        "time,energy,batch,dimM,dimN,dimK,trans,kernel_name,grid_size,block_size,useTensorCore\n"
        "0.5,0.05,1,2048,2048,2048,NN,ampere_bf16_s16816gemm,128,256,True\n"
        "0.2,0.02,16,512,512,64,NT,ampere_bf16_s16816gemm,64,256,True\n"
        "0.0,0.02,1,64,64,64,NN,k,1,1,True\n"
    )
    (root / "a10_softmax_freq900.csv").write_text(
        "time,energy,batch,dim,prec\n0.05,0.004,4096,1024,bf16\n0.05,0.004,4096,1024,fp32\n"
    )
    (root / "a10_layernorm_freq900.csv").write_text(
        "time,energy,rows,row_length\n0.04,0.003,8192,1024\n"
    )
    (root / "yz8_flash_attention_freq900.csv").write_text(
        "time,energy,batch,nheads,seqlen,headdim,causal\n1.2,0.15,2,16,2048,64,true\n"
        "1.0,0.1,2,16,,64,false\n"
    )
    (root / "yz8_pooling_freq900.csv").write_text("time,energy,batch\n0.1,0.01,4\n")
    return root


def test_per_op_rows(per_kernel: Path) -> None:
    rows, skipped = load_measured_ops(per_kernel)
    types = sorted((r.op_type, r.hardware) for r in rows)
    assert types == [
        ("bmm", "a100_40gb_pcie"),
        ("flash_attention", "a100_40gb_pcie"),
        ("gemm", "a100_40gb_pcie"),
        ("layernorm", "a10"),
        ("softmax", "a10"),
    ]
    assert all(r.clock_hz == 900e6 for r in rows)
    bmm = next(r for r in rows if r.op_type == "bmm")
    assert bmm.op.tensors[1].shape == (16, 512, 64)  # NT: B stored [batch, n, k]
    assert bmm.op.attrs["transpose_b"] is True
    assert skipped["non-positive or missing time or energy"] == 1
    assert skipped["not bf16 (fp32)"] == 1
    assert skipped["attention row needs batch, heads, seq and head_dim"] == 1
    assert sum(skipped.values()) == 4  # and the pooling row: unknown op type


def test_per_op_cli(per_kernel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plot = tmp_path / "ops.svg"
    args = ["validate-artifact", "--data-dir", str(per_kernel), "--format", "json"]
    assert main([*args, "--output-csv", str(tmp_path / "ops.csv"), "--output-plot", str(plot)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["mode"] == "per-op" and summary["rows"] == 5
    assert summary["groups"]["a10:softmax"]["energy"]["count"] == 1
    square = tmp_path / "ops_square_gemm.svg"
    softmax = tmp_path / "ops_softmax.svg"
    assert plot.is_file() and square.is_file() and softmax.is_file()
    assert (tmp_path / "ops_energy_breakdown.svg").is_file()
    with (tmp_path / "ops.csv").open() as handle:
        assert len(list(csv.DictReader(handle))) == 5


def test_plot_path_must_be_svg(
    artifact: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["validate-artifact", "--workload-dir", str(artifact), "--format", "json"]
    assert main([*args, "--output-plot", str(tmp_path / "plot.png")]) == 2
    assert "--output-plot must be an .svg file" in capsys.readouterr().err


def test_plot_without_matplotlib_says_what_to_install(
    artifact: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    args = ["validate-artifact", "--workload-dir", str(artifact), "--format", "json"]
    assert main([*args, "--output-plot", str(tmp_path / "plot.svg")]) == 2
    assert "pip install 'opmodel[plots]'" in capsys.readouterr().err
