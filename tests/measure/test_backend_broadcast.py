"""The measurement backend's elementwise calls with a broadcast input (add, div, where) on the
stand-in torch: which shapes each torch call gets, and the op each case measures."""

from __future__ import annotations

from pathlib import Path

from tests.measure.test_backend import _cases_on_a_fake


def test_broadcast_cases_run_torch_add_on_a_broadcast_input(tmp_path: Path) -> None:
    """``broadcast: [none, row, column]``: the add's second input is ``[rows, length]``,
    ``[length]`` or ``[rows, 1]``, and torch broadcasts it (ATen's non-contiguous kernel)."""
    torch, backend, cases = _cases_on_a_fake(
        tmp_path,
        "  - kind: elementwise\n    sizes: {rows: [4], length: [8]}\n    functions: [add]\n"
        "    broadcast: [none, row, column]\n",
    )
    assert [c.label.split(" add")[-1] for c in cases] == ["", " row broadcast", " column broadcast"]
    for case in cases:
        backend.kernel(case)()
    assert [shapes for name, shapes, _ in torch.kernels if name == "add"] == [
        ((4, 8), (4, 8)),
        ((4, 8), (8,)),
        ((4, 8), (4, 1)),
    ]


def test_div_and_where_cases_broadcast_the_divisor_and_the_condition(tmp_path: Path) -> None:
    """div's divisor and where's condition take the broadcast shape; the condition is a bool
    made once outside the timed call, the op's first input an int8 tensor of its shape."""
    torch, backend, cases = _cases_on_a_fake(
        tmp_path,
        "  - kind: elementwise\n    sizes: {rows: [4], length: [8]}\n    functions: [div, where]\n"
        "    broadcast: [row]\n",
    )
    for case in cases:
        backend.kernel(case)()
    calls = [(name, shapes) for name, shapes, _ in torch.kernels if name in ("div", "where")]
    assert calls == [("div", ((4, 8), (8,))), ("where", ((8,), (4, 8), (4, 8)))]
    where = next(case for case in cases if case.function == "where").op()
    assert [(t.shape, t.dtype.value) for t in where.tensors] == [
        ((8,), "int8"),
        ((4, 8), "bf16"),
        ((4, 8), "bf16"),
        ((4, 8), "bf16"),
    ]


def test_strided_cases_hand_torch_one_half_of_a_wider_buffer(tmp_path: Path) -> None:
    """``broadcast: [strided]``: the last operand (SiLU's only one, an add's second) is a
    ``narrow`` view of a ``[rows, 2 x length]`` buffer, as torch.chunk gives; the op tags it
    ``strided``."""
    torch, backend, cases = _cases_on_a_fake(
        tmp_path,
        "  - kind: elementwise\n    sizes: {rows: [4], length: [8]}\n    functions: [silu, add]\n"
        "    broadcast: [strided]\n",
    )
    for case in cases:
        backend.kernel(case)()
    calls = [(name, shapes) for name, shapes, _ in torch.kernels if name in ("silu", "add")]
    assert calls == [("silu", ((4, 8),)), ("add", ((4, 8), (4, 8)))]
    assert torch.views == [((4, 16), (4, 8)), ((4, 16), (4, 8))]  # made once, outside the call
    assert [c.op().tensors[-2].layout for c in cases] == ["strided", "strided"]
    assert [c.op().tensors[0].layout for c in cases] == ["strided", None]
