"""opmodel.report: hand-derived figures for a roofline GEMM, every example on every model, the
text format, and bad arguments."""

from __future__ import annotations

import json

import pytest

from opmodel import DType, Engine, LocalOp, OpKind, OpValidationError, Phase, TensorRole, TensorSpec
from opmodel.hardware import load_hardware
from opmodel.models import get_model, model_names
from opmodel.models.gemm.overhead import overhead_calibration
from opmodel.parsing import load_op
from opmodel.report import format_summary, si, summarize
from opmodel.report.accuracy import TABLE_PATH

from ..conftest import EXAMPLES, gemm

GENERIC = load_hardware("gpu_generic")


def test_roofline_gemm_by_hand() -> None:
    """4096^3 bf16 on gpu_generic: 2 x 4096^3 = 137.4 GFLOP at the 307.2 TFLOP/s peak
    (2048 FLOP/clk x 100 SMs x 1.5 GHz) takes 447.4 us; three 32 MiB tensors cross HBM once
    (100.7 MB, 62.9 us at 1.6 TB/s), so the tensor engine limits it at 100 % of peak."""
    op = gemm(4096, 4096, 4096)
    summary = summarize(op, get_model("roofline").predict(op, GENERIC), GENERIC)
    flops, nbytes = 2 * 4096**3, 3 * 4096 * 4096 * 2
    assert summary.flops == flops and summary.hbm_bytes == nbytes
    assert summary.latency_s == pytest.approx(flops / 307.2e12)
    assert summary.peak_flops_per_s == pytest.approx(307.2e12)
    assert summary.compute_fraction == pytest.approx(1.0)
    assert summary.achieved_hbm_bytes_per_s == pytest.approx(nbytes / (flops / 307.2e12))
    assert summary.hbm_fraction == pytest.approx(nbytes * 307.2e12 / flops / 1.6e12)
    assert summary.intensity_flops_per_byte == pytest.approx(4096 / 3)  # 2n^3 / 6n^2
    assert summary.ridge_flops_per_byte == pytest.approx(192.0)  # 307.2e12 / 1.6e12
    assert summary.limiter == "tensor" and summary.kernel is None
    # tensor 8.138e-13 J/FLOP, HBM 3.2e-11 J/B, static 50 W over the latency
    energy = flops * 8.138e-13 + nbytes * 3.2e-11 + 50.0 * flops / 307.2e12
    assert summary.energy_j == pytest.approx(energy)
    assert summary.average_power_w == pytest.approx(energy * 307.2e12 / flops)


def test_kernel_level_gemm_names_kernel_grid_and_limit() -> None:
    hw = load_hardware("h100_sxm")
    op = gemm(4096, 4096, 4096)
    profile = get_model("effective_roofline").predict(op, hw)
    summary = summarize(op, profile, hw)
    grid = profile.diagnostics.grid
    assert summary.kernel == profile.diagnostics.kernel.name
    assert summary.grid is not None and f"{grid.ctas} CTAs" in summary.grid
    assert summary.limiter == " + ".join(profile.diagnostics.limiting_resources)
    assert 0 < summary.compute_fraction <= 1  # type: ignore[operator]


def test_gemm_models_say_what_fixed_overhead_they_charge() -> None:
    """The text's ``overhead`` line: the cycles in the diagnostics, at the kernel's clock, and
    where they come from (the fitted sm_90 value, a config's own value, the estimate); none for
    the roofline or a streaming op."""
    hw, op = load_hardware("h100_sxm"), gemm(4096, 4096, 4096)
    fitted = overhead_calibration().fitted("effective_roofline", "sm90")
    profile = get_model("effective_roofline").predict(op, hw)
    summary = summarize(op, profile, hw)
    assert summary.fixed_overhead_cycles == fitted
    assert summary.fixed_overhead_from == (
        "fitted for sm90: configs/calibrations/gemm_fixed_overhead.yaml"
    )
    seconds = si(fitted / profile.diagnostics.sm_clock_hz, "s")  # type: ignore[operator]
    assert f"overhead   {fitted:,} cycles fixed, {seconds} (fitted for sm90" in format_summary(
        summary
    )
    own = load_hardware("h100_sxm", overrides={"overhead.gemm_fixed_overhead_cycles": 1234})
    mine = summarize(op, get_model("extended_roofline").predict(op, own), own)
    assert mine.fixed_overhead_cycles == 1234
    assert mine.fixed_overhead_from == "the config's overhead.gemm_fixed_overhead_cycles"
    l40s = load_hardware("l40s")
    estimate = summarize(op, get_model("effective_roofline").predict(op, l40s), l40s)
    assert estimate.fixed_overhead_cycles == l40s.overhead.fixed_device_overhead_cycles
    assert estimate.fixed_overhead_from == (
        "the config's estimate, overhead.fixed_device_overhead_cycles"
    )
    plain = summarize(op, get_model("roofline").predict(op, hw), hw)
    assert plain.fixed_overhead_cycles is None and "overhead" not in format_summary(plain)


def test_systolic_gemm_names_its_limit() -> None:
    """A TPU GEMM's diagnostics say ``limiting`` (mxu or hbm); the summary reads it."""
    hw, op = load_hardware("tpu_v5e"), gemm(4096, 4096, 4096)
    profile = get_model("effective_roofline").predict(op, hw)
    assert summarize(op, profile, hw).limiter == profile.diagnostics.limiting in ("mxu", "hbm")


def test_a_backward_row_op_names_each_kernels_limit() -> None:
    """LayerNorm's backward runs two kernels (input gradient, weight gradients), each with its
    own diagnostics and limit."""
    hw, op = load_hardware("h100_sxm"), load_op(EXAMPLES / "layernorm_backward.yaml")
    profile = get_model("effective_roofline").predict(op, hw)
    limiter = summarize(op, profile, hw).limiter
    d = profile.diagnostics
    assert limiter == f"grad_input: {d.grad_input.limiter}; weight_grads: {d.weight_grads.limiter}"


def test_writes_left_dirty_in_l2_take_no_bandwidth_in_the_run() -> None:
    """The warm RMSNorm example on an L40S: its 16 MiB input is still in the 96 MB L2 and its
    16 MiB output, with the 8 kB of weights it reads from DRAM, allocates far less than the L2
    holds (x = (R + W) / C < 1), so none of the output is written back during the run
    (docs/models/streaming.md, "Write-back"). The profile charges all 16 MiB to the op; the
    summary's rate counts the 8 kB read alone, not 16.8 MB in 9 us (208 % of the L40S's
    864 GB/s), and the text says where the writes went."""
    hw, op = load_hardware("l40s"), load_op(EXAMPLES / "rmsnorm_warm.yaml")
    profile = get_model("effective_roofline").predict(op, hw)
    summary = summarize(op, profile, hw)
    assert summary.hbm_write_bytes == 2048 * 4096 * 2
    assert profile.diagnostics.dram_write_back_bytes == 0.0
    assert summary.hbm_write_after_run_bytes == 2048 * 4096 * 2
    assert summary.achieved_hbm_bytes_per_s == pytest.approx(
        summary.hbm_read_bytes / summary.latency_s  # type: ignore[operator]
    )
    assert "16.8 MB written (16.8 MB of it after the run, dirty in L2)" in format_summary(summary)
    cold = load_op(EXAMPLES / "rmsnorm.yaml")  # no producer: every write in the run
    cold_summary = summarize(cold, get_model("effective_roofline").predict(cold, hw), hw)
    assert cold_summary.hbm_write_after_run_bytes == 0.0
    assert cold_summary.achieved_hbm_bytes_per_s == pytest.approx(
        cold_summary.hbm_bytes / cold_summary.latency_s  # type: ignore[operator]
    )


def test_a_fraction_above_peak_from_other_engines_is_explained() -> None:
    """The roofline's causal prefill on a TPU v5e: its FLOPs hold the softmax's vector work
    beside the MMAs it overlaps, so FLOPs over latency pass the tensor peak; a GEMM's do not."""
    tpu = load_hardware("tpu_v5e")
    op = load_op(EXAMPLES / "attention_prefill.yaml")
    summary = summarize(op, get_model("roofline").predict(op, tpu), tpu)
    assert summary.compute_fraction is not None and summary.compute_fraction > 1.0
    note = "(the FLOPs count other engines' work beside the tensor engine's)"
    assert note in format_summary(summary)
    plain = summarize(
        gemm(4096, 4096, 4096), get_model("roofline").predict(gemm(4096, 4096, 4096), tpu), tpu
    )
    assert "other engines" not in format_summary(plain)


@pytest.mark.parametrize("model", model_names())
@pytest.mark.parametrize("hardware", ["a100_40gb_pcie", "h100_sxm", "tpu_v5e"])
def test_every_example_summarises(model: str, hardware: str) -> None:
    """Every example the model supports gives finite, non-negative figures, DRAM traffic no
    faster than the datasheet bandwidth while the op runs, and a text block whose first line
    names the op and whose body has no empty or 'None' value."""
    hw, predictor = load_hardware(hardware), get_model(model)
    for path in sorted(EXAMPLES.glob("*.yaml")):
        op = load_op(path)
        if not predictor.supports(op) or (op.kind == "collective" and hw.interconnect is None):
            continue  # a collective needs the config's links (tests/models/test_collective.py)
        summary = summarize(op, predictor.predict(op, hw), hw)
        for value in (summary.compute_fraction, summary.hbm_fraction, summary.average_power_w):
            assert value is None or 0 <= value < float("inf")
        assert summary.hbm_fraction is None or summary.hbm_fraction <= 1 + 1e-9, path.name
        if summary.engine is Engine.MEMORY:
            assert summary.peak_flops_per_s is None
        text = format_summary(summary)
        assert text.splitlines()[0].startswith(f"{op.kind.value} '{op.name}' on {hw.name}: ")
        assert "None" not in text and text.endswith("\n")


@pytest.mark.parametrize(
    ("value", "unit", "expected"),
    [
        (1.5e-5, "s", "15.0 µs"),
        (9.894e14, "FLOP/s", "989 TFLOP/s"),
        (3.35e12, "B/s", "3.35 TB/s"),
        (999.96, "W", "1.00 kW"),
        (2.5e-3, "J", "2.50 mJ"),
        (0, "FLOP", "0 FLOP"),
        (7.0, "W", "7.00 W"),
    ],
)
def test_si_prefixes(value: float, unit: str, expected: str) -> None:
    assert si(value, unit) == expected


def test_bad_arguments_are_one_line_errors() -> None:
    op = gemm(64, 64, 64)
    profile = get_model("roofline").predict(op, GENERIC)
    with pytest.raises(OpValidationError, match="summarize: hardware must be a HardwareSpec"):
        summarize(op, profile, "gpu_generic")  # type: ignore[arg-type]
    with pytest.raises(OpValidationError, match="summarize: op must be a LocalOp"):
        summarize({"kind": "gemm"}, profile, GENERIC)  # type: ignore[arg-type]
    with pytest.raises(OpValidationError, match="format_summary: expected an OpSummary"):
        format_summary(profile)  # type: ignore[arg-type]
    with pytest.raises(OpValidationError, match="si: value must be a number"):
        si("1", "s")  # type: ignore[arg-type]


def test_the_text_quotes_the_measured_error_of_the_kind_on_the_config() -> None:
    """effective_roofline's RMSNorm on h100_sxm: the table's held-out figure for that kind and
    config, with its row count and bias; a kind without rows says so; the roofline, which the
    table does not cover, quotes nothing."""
    table = json.loads(TABLE_PATH.read_text())["rows"]
    rows = {(r["model"], r["kind"], r["hardware"]): r for r in table}
    row = rows[("effective_roofline", "rmsnorm", "h100_sxm")]
    hw, op = load_hardware("h100_sxm"), load_op(EXAMPLES / "rmsnorm.yaml")
    text = format_summary(summarize(op, get_model("effective_roofline").predict(op, hw), hw))
    quoted = f"{100 * row['mape']:.1f} % MAPE ({row['geomean_ratio']:.2f}x) over {row['count']:,}"
    assert f"  validated  {quoted} held-out rmsnorm kernels measured on h100_sxm" in text
    l40s, back = load_hardware("l40s"), load_op(EXAMPLES / "layernorm_backward.yaml")
    summary = summarize(back, get_model("effective_roofline").predict(back, l40s), l40s)
    assert summary.validated is not None and summary.validated.rows == 0
    assert summary.validated.line().startswith("no held-out layernorm_backward rows for l40s")
    assert summarize(op, get_model("roofline").predict(op, hw), hw).validated is None
    gemm_op = load_op(EXAMPLES / "gemm.yaml")  # extended_roofline's GEMMs are in the table too
    extended = rows[("extended_roofline", "gemm", "h100_sxm")]
    quoted = summarize(gemm_op, get_model("extended_roofline").predict(gemm_op, hw), hw).validated
    assert quoted is not None and (quoted.rows, quoted.mape) == (
        extended["count"],
        extended["mape"],
    )
    assert summarize(op, get_model("extended_roofline").predict(op, hw), hw).validated is not None


def test_a_broadcast_elementwise_op_is_quoted_as_unmeasured() -> None:
    """ATen's kernel for a broadcast input has no measured rows: the text does not lend it the
    same-shape elementwise figure; the same op without the broadcast keeps that figure."""
    h100 = load_hardware("h100_sxm")
    model = get_model("effective_roofline")

    def add(other: tuple[int, ...]) -> LocalOp:
        tensors = (
            TensorSpec(TensorRole.INPUT, (8192, 4096), DType.BF16),
            TensorSpec(TensorRole.INPUT, other, DType.BF16),
            TensorSpec(TensorRole.OUTPUT, (8192, 4096), DType.BF16),
        )
        return LocalOp(
            name="add", kind=OpKind.ELEMENTWISE, phase=Phase.INFERENCE, tensors=tensors,
            attrs={"function": "add"},
        )  # fmt: skip

    bias = add((4096,))
    quoted = summarize(bias, model.predict(bias, h100), h100).validated
    assert quoted is not None and quoted.rows == 0
    assert quoted.line().startswith("no held-out elementwise (broadcast input) rows for h100_sxm")
    same = add((8192, 4096))
    kept = summarize(same, model.predict(same, h100), h100).validated
    assert kept is not None and kept.rows > 0


def test_a_where_computes_in_its_operands_dtype_not_its_conditions() -> None:
    op = load_op(EXAMPLES / "causal_where.yaml")  # an int8 condition, then bf16 operands
    hardware = load_hardware("h100_sxm")
    summary = summarize(op, get_model("effective_roofline").predict(op, hardware), hardware)
    assert summary.compute_dtype is DType.BF16
