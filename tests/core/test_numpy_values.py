"""Shapes and attrs computed with numpy (or anything with ``__index__`` / ``tolist()``) are
accepted and stored as Python values; floats and booleans where integers belong stay errors."""

from __future__ import annotations

import pytest

from opmodel import LocalOp, OpValidationError, TensorSpec
from opmodel.hardware import load_hardware
from opmodel.models import get_model


class Index:
    """An integer type that is not int: what numpy's int64 looks like to Python."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


class Array:
    """An array whose ``tolist()`` gives Python values, as numpy's and torch's do."""

    def __init__(self, *values: object) -> None:
        self.values = list(values)

    def tolist(self) -> list[object]:
        return self.values


def _grouped(attrs: dict[str, object]) -> LocalOp:
    return LocalOp(
        name="moe",
        kind="grouped_gemm",
        phase="prefill",
        tensors=(
            TensorSpec("input", (96, 64), "bf16"),
            TensorSpec("weight", (3, 64, 32), "bf16"),
            TensorSpec("output", (96, 32), "bf16"),
        ),
        attrs=attrs,
    )


def test_integer_types_and_arrays_make_python_shapes() -> None:
    spec = TensorSpec("input", (Index(4), Index(8)), "bf16")
    assert spec.shape == (4, 8) and all(type(d) is int for d in spec.shape)
    assert TensorSpec("input", Array(4, 8), "bf16").shape == (4, 8)
    assert spec == TensorSpec("input", (4, 8), "bf16")


@pytest.mark.parametrize("shape", [(4.0, 8), (True, 8), (Index(0), 8), Array(4.5), Array()])
def test_non_integers_stay_errors(shape: object) -> None:
    with pytest.raises(OpValidationError, match=r"TensorSpec\.shape: "):
        TensorSpec("input", shape, "bf16")  # type: ignore[arg-type]


def test_attrs_from_arrays_equal_their_python_twins() -> None:
    op = _grouped({"group_sizes": Array(32, 0, 64), "cta_tile_m": Array(64).tolist()[0]})
    twin = _grouped({"group_sizes": [32, 0, 64], "cta_tile_m": 64})
    assert op.attrs == twin.attrs and hash(op.attrs) == hash(twin.attrs)
    assert all(type(v) is int for v in op.attrs["group_sizes"])
    hardware = load_hardware("h100_sxm")
    model = get_model("effective_roofline")
    assert model.predict(op, hardware).latency_s == model.predict(twin, hardware).latency_s


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        ({"group_sizes": Array(32.0, 0, 64)}, r"group_sizes: \[0\] must be an integer"),
        ({"group_sizes": Array(Array(1, 2))}, r"group_sizes: \[0\] must be an integer"),
        ({"transpose_b": Array(1).values[0]}, r"transpose_b: must be a boolean"),
    ],
)
def test_attr_values_of_the_wrong_type_stay_errors(attrs: dict[str, object], message: str) -> None:
    with pytest.raises(OpValidationError, match=message):
        _grouped(attrs)


def test_numpy() -> None:
    np = pytest.importorskip("numpy")
    sizes = np.bincount(np.arange(96) % 3, minlength=3)  # 32 rows per expert
    op = _grouped({"group_sizes": sizes, "transpose_b": np.False_})
    assert op.attrs == _grouped({"group_sizes": [32, 32, 32], "transpose_b": False}).attrs
    spec = TensorSpec("input", np.array([4, 8]), "bf16")
    assert spec.shape == (4, 8) and type(spec.shape[0]) is int
    with pytest.raises(OpValidationError, match="must be an integer"):
        _grouped({"cta_tile_m": np.float64(64)})
