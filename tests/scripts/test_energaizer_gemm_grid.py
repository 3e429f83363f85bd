"""scripts/energaizer_gemm_grid.py: the GEMMs of EnergAIzer passes as a measurement grid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opmodel import ConfigError
from opmodel.measure import load_grid
from opmodel.measure.plan import expand
from tests.scripts.loader import load_script

SCRIPT = load_script("energaizer_gemm_grid")


def test_a_linear_layer_is_tokens_by_outputs_with_the_weight_transposed() -> None:
    """Qwen2-1.5B's q_proj at 32,768 tokens: the list gives cuBLAS's dimM = 1536 outputs,
    dimN = 32,768 tokens, dimK = 1536 inputs; F.linear runs x [32768, 1536] @ W[1536, 1536]^T."""
    entry = [
        {"batch": 1, "dimM": 1536, "dimN": 32768, "dimK": 1536, "precM": "bf16"},
        ["gemm", "tc", "bf16_bf16"],
    ]
    case = SCRIPT.gemm_case(entry)
    assert (case.batch, case.m, case.n, case.k, case.trans) == (1, 32768, 1536, 1536, "NT")
    assert case.label == "gemm bf16 m=32768 n=1536 k=1536 NT"


def test_gpt2_conv1d_keeps_the_lists_order_and_no_transpose() -> None:
    entry = [
        {"batch": 1, "dimM": 16384, "dimN": 2304, "dimK": 768, "precM": "bf16"},
        ["gemm", "tc", "bf16_bf16"],
    ]
    case = SCRIPT.gemm_case(entry, conv1d=True)
    assert (case.m, case.n, case.k, case.trans) == (16384, 2304, 768, "NN")


def test_eager_attention_scores_take_k_transposed_and_the_context_does_not() -> None:
    scores = [
        {"batch": 96, "dimM": 4096, "dimN": 4096, "dimK": 128, "precM": "bf16"},
        ["gemm", "tc"],
    ]
    context = [
        {"batch": 96, "dimM": 4096, "dimN": 128, "dimK": 4096, "precM": "bf16"},
        ["gemm", "tc"],
    ]
    assert SCRIPT.gemm_case(scores).trans == "NT"
    assert SCRIPT.gemm_case(context).trans == "NN"
    assert SCRIPT.gemm_case(context).label == "batched_gemm bf16 batch=96 m=4096 n=128 k=4096 NN"


@pytest.mark.parametrize(
    "entry",
    [
        # rotary embedding's fp32 outer product on the CUDA cores
        [
            {"batch": 1, "dimM": 64, "dimN": 4096, "dimK": 1, "precM": "fp32"},
            ["gemm", "cuda", "fp32_fp32"],
        ],
        [{"dim": 1024, "op": "relu", "prec": "bf16"}, ["elementwise"]],
    ],
)
def test_other_entries_are_not_cases(entry: list[object]) -> None:
    assert SCRIPT.gemm_case(entry) is None


def test_a_bad_list_is_one_error_naming_the_file_and_entry(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(
        json.dumps([[{"batch": 1, "dimM": 8, "dimK": 8, "precM": "bf16"}, ["gemm", "tc"]]])
    )
    with pytest.raises(ConfigError, match=r"bad\.json: entry 0: .*dimN"):
        SCRIPT.workload_cases(path)
    path.write_text("{")
    with pytest.raises(ConfigError, match=r"bad\.json: not JSON"):
        SCRIPT.workload_cases(path)


def test_the_shipped_grid_is_the_scripts_output(capsys: pytest.CaptureFixture[str]) -> None:
    """configs/measure/energaizer_gemms.yaml is written by the script with its defaults."""
    assert SCRIPT.main([]) == 0
    assert capsys.readouterr().out == SCRIPT.SHIPPED.read_text()


def test_the_grid_runs_each_distinct_gemm_of_the_four_passes_once() -> None:
    """Distinct GEMMs: BERT-large 6 (Q, K, V and output projections share a shape; two FFN
    layers, the pooler, the two attention bmms), GPT-2 6 (four Conv1D shapes, two bmms),
    OPT-1.3B 5 (projections, two FFN layers, two bmms), Qwen2-1.5B 6 (Q and O, K and V, gate
    and up, down, two bmms); none is shared between passes: 23. Every case's label is the one
    `opmodel measure` gives it, so the measured rows can be matched to the header's counts."""
    per_workload = {
        name: SCRIPT.workload_cases(SCRIPT.WORKLOAD_DIR / f"{name}.json")
        for name in SCRIPT.DEFAULT_WORKLOADS
    }
    cases = set().union(*per_workload.values())
    plan = expand(load_grid("energaizer_gemms"))
    assert {case.label for case in plan} == {case.label for case in cases}
    assert len(plan) == len(cases) == 23
    bert = per_workload["bertmodel_large_pbf16_b32_s256_modeprefill"]
    # 24 layers x (Q, K, V, output projection) at 8,192 tokens of 1024 features
    assert bert[SCRIPT.GemmCase(1, 8192, 1024, 1024, "NT")] == 96
