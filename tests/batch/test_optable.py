"""Op-table rows: the compact tensor text, JSON cells, one-line errors, and round trips."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opmodel import ConfigError, DType, OpKind, OpValidationError
from opmodel.batch import format_tensors, op_from_row, op_to_row, parse_tensors, predict_many
from opmodel.batch.optable import row_key
from opmodel.hardware import checked_power_state
from opmodel.parsing import read_yaml_mapping

from ..conformance.builders import BUILDERS

ROW = {
    "name": "qkv",
    "kind": "gemm",
    "phase": "prefill",
    "tensors": "input:512x4096:bf16;weight:4096x6144:bf16;output:512x6144:bf16",
    "attrs": '{"transpose_b": false}',
}


def test_compact_tensors() -> None:
    tensors = parse_tensors("input/q:16x32x1x128:bf16; output/o:16x32x1x128:bf16")
    assert [(t.role.value, t.layout, t.shape, t.dtype) for t in tensors] == [
        ("input", "q", (16, 32, 1, 128), DType.BF16),
        ("output", "o", (16, 32, 1, 128), DType.BF16),
    ]
    assert format_tensors(tensors) == "input/q:16x32x1x128:bf16;output/o:16x32x1x128:bf16"


def test_json_tensors_equal_compact_ones() -> None:
    text = '[{"role": "input", "shape": [8, 4], "dtype": "fp32"}, {"role": "output", "shape": [8], "dtype": "fp32"}]'
    assert parse_tensors(text) == parse_tensors("input:8x4:fp32;output:8:fp32")


def test_row_to_op() -> None:
    op = op_from_row(ROW, "t.csv: row 1")
    assert (op.name, op.kind, op.attrs["transpose_b"]) == ("qkv", OpKind.GEMM, False)
    assert op_from_row(op_to_row(op), "x") == op


def test_the_name_does_not_change_the_key() -> None:
    assert row_key(ROW) == row_key({**ROW, "name": "other"})
    assert row_key(ROW) != row_key({**ROW, "attrs": ""})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"tensors": ""}, "t.csv: row 3: tensors: required column is empty or absent"),
        ({"kind": "gemn"}, "t.csv: row 3: op 'qkv': kind: must be one of gemm, batched_gemm"),
        (
            {"tensors": "input:512x40x:bf16"},
            "t.csv: row 3: tensors: tensor 0 'input:512x40x:bf16': shape must be integers joined by 'x' (got '512x40x')",
        ),
        (
            {"tensors": "input:512:bf16:x"},
            "t.csv: row 3: tensors: tensor 0 'input:512:bf16:x': expected role[/layout]:DIMxDIM...:dtype",
        ),
        ({"tensors": "[{]"}, "t.csv: row 3: tensors: not valid JSON"),
        ({"attrs": "[1]"}, "t.csv: row 3: attrs: expected a JSON object (got [1])"),
        ({"attrs": '{"transpose_c": true}'}, "t.csv: row 3: op 'qkv' (gemm): attrs.transpose_c"),
        (
            {"tensors": "input:4x4:bf17;weight:4x4:bf16;output:4x4:bf16"},
            "t.csv: row 3: tensors: tensor 0 'input:4x4:bf17' dtype: must be one of fp64",
        ),
        (
            {"tensors": "input:4x4:bf16;weight:4x0:bf16;output:4x4:bf16"},
            "t.csv: row 3: tensors: tensor 1 'weight:4x0:bf16' shape: every dimension must be a "
            "positive integer (got (4, 0))",
        ),
        (
            {
                "tensors": '[{"role": "input", "shape": [4, 4], "dtype": "bf16"}, '
                '{"role": "wieght", "shape": [4, 4], "dtype": "bf16"}]'
            },
            "t.csv: row 3: tensors: tensor 1 role: must be one of input, weight",
        ),
    ],
)
def test_bad_rows_give_one_line(change: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        op_from_row({**ROW, **change}, "t.csv: row 3")
    assert len(info.value.problems) == 1
    assert info.value.problems[0].startswith(message), info.value.problems[0]


@given(kind=st.sampled_from(sorted(BUILDERS)), data=st.data())
def test_every_kind_round_trips_through_a_row(kind: OpKind, data: st.DataObject) -> None:
    builder = BUILDERS[kind]
    op = builder.build(data.draw(builder.sizes), DType.BF16)
    assert op_from_row(op_to_row(op), "x") == op


def test_public_functions_refuse_wrong_types_in_one_line() -> None:
    """What a Python caller may pass by mistake (None, a string for a list) is a named error,
    not an AttributeError or TypeError from inside the function."""
    cases = [
        # the package's own error (a ValueError too), as every error raised on purpose is
        (lambda: parse_tensors(None), OpValidationError, "expected the text of a tensors cell"),
        (lambda: parse_tensors("input:4xy:bf16"), OpValidationError, "integers joined by 'x'"),
        (lambda: parse_tensors("[{]"), OpValidationError, "not valid JSON"),
        (lambda: op_from_row(None, "row 3"), ConfigError, "row 3: expected a mapping"),
        (lambda: format_tensors(None), OpValidationError, "expected a sequence of TensorSpec"),
        (lambda: format_tensors(["input:4x4:bf16"]), OpValidationError, "a list holding others"),
        (lambda: predict_many(None, "h100_sxm"), OpValidationError, "iterable of LocalOp"),
        (lambda: predict_many("gemm", "h100_sxm"), OpValidationError, "(got str)"),
        (lambda: predict_many([], "h100_sxm", None), OpValidationError, "model must be a model"),
        (lambda: read_yaml_mapping(None), ConfigError, "expected a file path (got None)"),
        (lambda: checked_power_state("turbo"), ConfigError, "must be one of sustained, burst"),
    ]
    for call, error, text in cases:
        with pytest.raises(error, match=re.escape(text)):
            call()
