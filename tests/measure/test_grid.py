"""Measurement grids: the shipped grid loads; every mistake is named with its field and the choices."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel.core.errors import ConfigError, UnknownNameError
from opmodel.hardware import load_hardware
from opmodel.measure import load_grid, shipped_grid_names
from opmodel.measure.plan import expand
from opmodel.models import get_model
from opmodel.models.streaming.aten_broadcast import BROADCAST_KERNEL
from opmodel.models.streaming.evaluate import StreamingEvaluation


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "grid.yaml"
    path.write_text("name: t\n" + body)
    return path


def test_shipped_grid_loads_by_name() -> None:
    assert "h200_8min" in shipped_grid_names()
    grid = load_grid("h200_8min")
    assert grid.energy and grid.energy_loop_s >= 0.2 and grid.flush_l2
    kinds = {entry.kind.value for entry in grid.ops}
    assert kinds == {
        "gemm",
        "batched_gemm",
        "softmax",
        "layernorm",
        "rmsnorm",
        "elementwise",
        "copy",
        "attention_prefill",
        "attention_decode",
    }


def test_unknown_grid_name_suggests() -> None:
    with pytest.raises(UnknownNameError, match="h200_8min"):
        load_grid("h200_8mn")


def test_missing_file() -> None:
    with pytest.raises(ConfigError, match="file not found"):
        load_grid("no/such/grid.yaml")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "ops:\n  - {kind: gemm, sizes: {m: [16], n: [16]}}\n",
            "ops[0].sizes.k: required for gemm",
        ),
        (
            "ops:\n  - {kind: gemm, sizes: {m: [16], n: [16], k: [8], rows: [2]}}\n",
            "ops[0].sizes.rows: not a size of gemm (sizes: m, n, k)",
        ),
        (
            "ops:\n  - {kind: gemm, sizes: {m: [16], n: [0], k: [8]}}\n",
            "ops[0].sizes.n[0]: must be > 0 (got 0)",
        ),
        (
            "ops:\n  - {kind: gemm, sizes: {m: [16], n: [16], k: [8]}, dtypes: [int8]}\n",
            "ops[0].dtypes: must be one of bf16, fp16, fp32, tf32, fp8_e4m3 (got 'int8')",
        ),
        (
            "ops:\n  - {kind: gemm, sizes: {m: [16], n: [16], k: [8]}, dtypes: [fp8_e4m3]}\n",
            "ops[0].trans: fp8_e4m3 takes NT, B column-major as torch._scaled_mm reads it "
            "(got 'NN')",
        ),
        (
            "ops:\n  - {kind: gemm, sizes: {m: [16], n: [16], k: [8, 24]}, trans: [NT], "
            "dtypes: [bf16, fp8_e4m3]}\n",
            "ops[0].sizes.k[1]: fp8_e4m3 needs a multiple of 16 (got 24)",
        ),
        (
            "ops:\n  - {kind: softmax, sizes: {rows: [2], length: [16]}, dtypes: [fp8_e4m3]}\n",
            "ops[0].dtypes: fp8_e4m3 is measured for forward gemm only (torch._scaled_mm)",
        ),
        (
            "ops:\n  - {kind: gemm, sizes: {m: [16], n: [16], k: [8]}, trans: [NX]}\n",
            "ops[0].trans: must be one of NN, NT, TN, TT (got 'NX')",
        ),
        (
            "ops:\n  - {kind: elementwise, sizes: {rows: [2], length: [8]}}\n",
            "ops[0].functions: required for elementwise",
        ),
        (
            "ops:\n  - {kind: elementwise, sizes: {rows: [2], length: [8]}, functions: [cube]}\n",
            "ops[0].functions: must be one of add, mul, div, where, relu",
        ),
        (
            "ops:\n  - {kind: optimizer, sizes: {elements: [64], tensors: [1]}}\n",
            "ops[0].functions: required for optimizer (sgd/fused, sgd/foreach",
        ),
        (
            "ops:\n  - {kind: optimizer, sizes: {elements: [64], tensors: [1]}, "
            "functions: [lion/fused]}\n",
            "ops[0].functions: must be one of sgd/fused",
        ),
        (
            "ops:\n  - {kind: reduction, sizes: {rows: [2]}}\n",
            "ops[0].kind: cannot measure reduction (measurable: gemm, batched_gemm",
        ),
        (
            "energy_loop_s: 0.05\nops:\n  - {kind: softmax, sizes: {rows: [2], length: [8]}}\n",
            "energy_loop_s: must be >= 0.2 s",
        ),
        ("ops: []\n", "ops: expected at least one op grid"),
        (
            "ops:\n  - {kind: grouped_gemm, sizes: {groups: [8], active: [4, 9], rows: [64], "
            "n: [32], k: [32]}}\n",
            "ops[0].sizes.active: 9 exceeds groups 8 or rows 64",
        ),
        (
            "ops:\n  - {kind: grouped_gemm, sizes: {groups: [8], active: [4], rows: [64], "
            "n: [32], k: [32]}, dtypes: [fp16]}\n",
            "ops[0].dtypes: grouped_gemm is measured in bf16 only (torch._grouped_mm)",
        ),
        (
            "ops:\n  - {kind: grouped_gemm, sizes: {groups: [8], active: [4], rows: [64], "
            "n: [32], k: [32]}, trans: [NT, TT]}\n",
            "ops[0].trans: grouped_gemm takes NT (groups along M) or TN (along K: the weight "
            "gradient) (got 'TT')",
        ),
        (
            "ops:\n  - {kind: gemm, sizes: {m: [16], n: [16], k: [8]}, backward: [true]}\n",
            "ops[0].backward: only attention_prefill, softmax, layernorm, rmsnorm, embedding have a "
            "measured backward pass",
        ),
        (
            "repeats: 0\nops:\n  - {kind: softmax, sizes: {rows: [2], length: [8]}}\n",
            "repeats: must be > 0",
        ),
        (
            "ops:\n  - {kind: softmax, sizes: {rows: [2], length: [8]}, sdpa_backends: [flash]}\n",
            "ops[0].sdpa_backends: attention_prefill and attention_decode only",
        ),
        (
            "ops:\n  - kind: attention_decode\n"
            "    sizes: {batch: [1], heads: [8], kv_heads: [8], context: [64], head_dim: [64]}\n"
            "    sdpa_backends: [cudnn]\n",
            "ops[0].sdpa_backends: must be one of default, flash (got 'cudnn')",
        ),
        (
            "ops:\n  - {kind: softmax, sizes: {rows: [2], length: [8]}, dtype: [bf16]}\n",
            "dtype",
        ),
        (
            "flush_idle_us: -5\nops:\n  - {kind: softmax, sizes: {rows: [2], length: [8]}}\n",
            "flush_idle_us: must be >= 0",
        ),
        (
            "ops:\n  - kind: elementwise\n    sizes: {rows: [2], length: [8]}\n"
            "    functions: [add, exp]\n    broadcast: [row]\n",
            "ops[0].broadcast: row and column for add, mul, div, where",
        ),
        (
            "ops:\n  - kind: elementwise\n    sizes: {rows: [2], length: [8]}\n"
            "    functions: [add]\n    broadcast: [bias]\n",
            "ops[0].broadcast: must be one of none, row, column, strided (got 'bias')",
        ),
        (
            "flush_l2: false\nflush_idle_us: 20\nops:\n"
            "  - {kind: softmax, sizes: {rows: [2], length: [8]}}\n",
            "flush_idle_us: waits after the L2 flush, needs flush_l2: true (got 20",
        ),
    ],
)
def test_grid_problems_are_named(tmp_path: Path, body: str, expected: str) -> None:
    path = _write(tmp_path, body)
    with pytest.raises(ConfigError) as info:
        load_grid(path)
    text = str(info.value)
    assert expected in text
    assert str(path) in text


def test_h200_broadcast_grid_times_each_op_four_ways() -> None:
    """h200_broadcast: add, mul, div and where, bf16 and fp32, over 3 x 2 sizes, each with its
    second input (where: its condition) as the first, [length] and [rows, 1], or a strided view;
    SiLU of a strided view beside the contiguous one; the model runs all but the contiguous
    ones as ATen's non-contiguous kernel."""
    cases = expand(load_grid("h200_broadcast"))
    assert len(cases) == 144 + 48 + 24
    model, h200 = get_model("effective_roofline"), load_hardware("h200_sxm")
    for case in cases[:8]:  # bf16 add and mul at 1,024 x 768, the four shapes each
        shapes = [t.shape for t in case.op().tensors]
        other = {"row": (768,), "column": (1024, 1)}.get(case.broadcast, (1024, 768))
        assert shapes == [(1024, 768), other, (1024, 768)]
        layouts = [t.layout for t in case.op().tensors]
        assert layouts == [None, "strided" if case.broadcast == "strided" else None, None]
        diagnostics = model.predict(case.op(), h200).diagnostics
        assert isinstance(diagnostics, StreamingEvaluation)
        assert (diagnostics.kernel.name == BROADCAST_KERNEL) == (case.broadcast != "none")
    silu = [c for c in cases if c.function == "silu"]
    assert len(silu) == 24 and {c.broadcast for c in silu} == {"none", "strided"}
    assert silu[1].label == "elementwise bf16 rows=1024 length=768 silu strided view"
    where = next(c for c in cases if c.function == "where" and c.broadcast == "column")
    shapes = [t.shape for t in where.op().tensors]
    assert shapes == [(1024, 1), (1024, 768), (1024, 768), (1024, 768)]
    diagnostics = model.predict(where.op(), h200).diagnostics
    assert isinstance(diagnostics, StreamingEvaluation)
    assert diagnostics.kernel.name == BROADCAST_KERNEL
