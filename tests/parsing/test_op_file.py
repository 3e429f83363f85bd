"""Op YAML files: every shipped example loads; bad files give exact one-line problems."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel import ConfigError, OpKind
from opmodel.parsing import load_op

from ..conftest import EXAMPLES


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.stem)
def test_examples_load(path: Path) -> None:
    assert load_op(path).kind in set(OpKind)


def test_every_kind_has_an_example() -> None:
    kinds = {load_op(p).kind for p in EXAMPLES.glob("*.yaml")}
    assert kinds == set(OpKind)


_GOOD_TENSORS = """tensors:
  - {role: input, shape: [4, 8], dtype: bf16}
  - {role: weight, shape: [8, 3], dtype: bf16}
  - {role: output, shape: [4, 3], dtype: bf16}
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "name: g\nkind: gemm\nphase: train_fwd\n" + _GOOD_TENSORS + "attrs: [1]\n",
            ["attrs: expected a mapping (got [1])"],
        ),
        ("name: g\nkind: gemm\n" + _GOOD_TENSORS, ["phase: missing required field"]),
        (
            "name: g\nkind: gemm\nphase: train_fwd\ntensors: []\n",
            ["tensors: expected at least one tensor (got [])"],
        ),
        (
            "name: g\nkind: gemm\nphase: train_fwd\ntensors:\n  - {role: input, shape: '45', dtype: bf16}\n",
            ["tensors[0].shape: expected a list (got '45')"],
        ),
        (
            "name: g\nkind: gemm\nphase: train_fwd\ntensors:\n  - {role: input, shape: [4], dtyp: bf16}\n",
            [
                "tensors[0].dtyp: unknown key; did you mean 'dtype'? (accepted: role, shape, dtype, layout)",
                "tensors[0].dtype: missing required field",
            ],
        ),
        (
            "name: g\nkind: gemm\nphase: train_fwd\ntensors:\n"
            "  - {role: input, shape: [0, 8], dtype: bf16}\n"
            "  - {role: weight, shape: [8, 3], dtype: bf16}\n"
            "  - {role: output, shape: [-4, 3], dtype: bf16}\n",
            [
                "tensors[0].shape: every dimension must be a positive integer (got (0, 8))",
                "tensors[2].shape: every dimension must be a positive integer (got (-4, 3))",
            ],
        ),
        (
            "name: g\nkind: gemm\nphase: train_fwd\n" + _GOOD_TENSORS + "attrs: {transpose_b: 1}\n",
            ["op 'g' (gemm): attrs.transpose_b: must be a boolean true/false (got 1)"],
        ),
    ],
)
def test_bad_op_files(tmp_path: Path, text: str, expected: list[str]) -> None:
    path = tmp_path / "op.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_op(path)
    assert list(info.value.problems) == [f"{path}: {line}" for line in expected]
