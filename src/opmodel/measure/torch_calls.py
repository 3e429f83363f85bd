"""The PyTorch call each case kind times (one per timed run), built from the torch module and
the case's allocated inputs: what :class:`~opmodel.measure.backend.TorchBackend` runs for the
grouped GEMMs, the row ops and the streaming ops (docs/measure.md has the table)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from opmodel.core.enums import OpKind
from opmodel.measure.case import Case, grouped_sizes

__all__ = [
    "grouped_call",
    "indexed_call",
    "optimizer_call",
    "row_call",
    "scaled_gemm_call",
    "stream_call",
]


def grouped_call(torch: Any, case: Case, inputs: list[Any]) -> Callable[[], Any]:
    """``torch._grouped_mm`` with each group's end row as int32 offsets (PyTorch 2.8 and later
    on sm_90 and later): NT, A ``[rows, k]`` by B ``[groups, n, k]`` transposed; TN (the weight
    gradient), A ``[rows, k]`` transposed by B ``[rows, n]``, offsets along K."""
    grouped_mm = getattr(torch, "_grouped_mm", None)
    if grouped_mm is None:
        version = torch.__version__
        msg = f"grouped_gemm needs torch._grouped_mm (PyTorch >= 2.8; this is {version})"
        raise RuntimeError(msg)
    a, b = inputs
    ends = list(itertools.accumulate(grouped_sizes(case)))
    offs = torch.tensor(ends, dtype=torch.int32, device="cuda")
    if case.trans == "TN":
        rows_last = a.transpose(0, 1)
        return lambda: grouped_mm(rows_last, b, offs=offs)
    weights = b.transpose(-2, -1)
    return lambda: grouped_mm(a, weights, offs=offs)


def scaled_gemm_call(torch: Any, case: Case) -> Callable[[], Any]:
    """``torch._scaled_mm`` of an fp8_e4m3 GEMM (trans NT): A ``[m, k]`` row-major by B stored
    ``[n, k]`` and passed transposed (column-major, as cuBLASLt's FP8 GEMM takes it), unit
    per-tensor scales, bf16 output. The operands are drawn in bf16 and converted (``randn``
    has no FP8 dtype)."""
    scaled_mm = getattr(torch, "_scaled_mm", None)
    fp8 = getattr(torch, "float8_e4m3fn", None)
    if scaled_mm is None or fp8 is None:
        version = torch.__version__
        msg = f"fp8_e4m3 needs torch._scaled_mm and torch.float8_e4m3fn (this is {version})"
        raise RuntimeError(msg)
    a_spec, b_spec = (t for t in case.op().tensors if t.role.value in ("input", "weight"))

    def operand(shape: tuple[int, ...]) -> Any:
        return torch.randn(shape, dtype=torch.bfloat16, device="cuda").to(fp8)

    a, b = operand(a_spec.shape), operand(b_spec.shape).transpose(0, 1)
    one = torch.ones((), dtype=torch.float32, device="cuda")
    return lambda: scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)


def row_call(torch: Any, case: Case, inputs: list[Any]) -> Callable[[], Any]:
    """Softmax over the last dimension, or a layer or RMS norm with its weights."""
    functional = torch.nn.functional
    if case.kind is OpKind.SOFTMAX:
        return lambda: torch.softmax(inputs[0], dim=-1)
    if case.kind is OpKind.LAYERNORM:
        x, w, b = inputs
        return lambda: functional.layer_norm(x, (x.shape[-1],), w, b)
    x, w = inputs
    return lambda: functional.rms_norm(x, (x.shape[-1],), w)


def indexed_call(
    torch: Any, case: Case, make: Callable[[tuple[int, ...]], Any]
) -> Callable[[], Any]:
    """The ops that take integer ids drawn at random over the vocabulary (as Vidur's profiler
    draws its tokens), ``make`` allocating their float tensor: ``F.embedding`` of ``tokens``
    ids into a ``vocab x hidden`` table, its gathered rows scattered over the table as a
    prompt's would be; ``F.cross_entropy`` (the mean loss) of ``rows x vocab`` logits, each
    row's gathered log-probability anywhere in its row."""
    s = case.size
    if case.kind is OpKind.EMBEDDING:
        ids = torch.randint(0, s["vocab"], (s["tokens"],), device="cuda")
        table = make((s["vocab"], s["hidden"]))
        return lambda: torch.nn.functional.embedding(ids, table)
    targets = torch.randint(0, s["vocab"], (s["rows"],), device="cuda")
    logits = make((s["rows"], s["vocab"]))
    return lambda: torch.nn.functional.cross_entropy(logits, targets)


def stream_call(torch: Any, case: Case, inputs: list[Any]) -> Callable[[], Any]:
    """An elementwise function, or a copy into a preallocated tensor of the same dtype."""
    if case.kind is OpKind.COPY:
        source = inputs[0]
        target = torch.empty_like(source)
        return lambda: target.copy_(source)
    return _elementwise(torch, case.function or "add", inputs)


def _elementwise(torch: Any, function: str, inputs: list[Any]) -> Callable[[], Any]:
    functional = torch.nn.functional
    unary: dict[str, Callable[[Any], Any]] = {
        "relu": torch.relu,
        "exp": torch.exp,
        "tanh": torch.tanh,
        "sigmoid": torch.sigmoid,
        "silu": functional.silu,
        "gelu": lambda x: functional.gelu(x, approximate="tanh"),
    }
    if function in ("add", "mul", "div"):
        binary = getattr(torch, function)  # torch.add, torch.mul, torch.div
        return lambda: binary(inputs[0], inputs[1])
    if function == "where":  # a bool condition, half true, made once outside the timed call
        condition, a, b = inputs[0] > 0, inputs[1], inputs[2]
        return lambda: torch.where(condition, a, b)
    fn, x = unary[function], inputs[0]
    return lambda: fn(x)


def optimizer_call(torch: Any, case: Case, dtype: Any) -> Callable[[], Any]:
    """``torch.optim``'s step over ``elements`` parameters split into ``tensors`` tensors of
    ``dtype`` (sizes differing by one at most), each with a gradient: SGD (momentum 0.9 for
    ``sgd_momentum``), Adam or AdamW at their defaults, ``fused=True`` or ``foreach=True``;
    one step first creates the states, so the timed steps update them."""
    algorithm, implementation = case.optimizer_step
    n, count = case.size["elements"], case.size["tensors"]
    sizes = [n // count + (i < n % count) for i in range(count)]
    params = [torch.zeros(size, dtype=dtype, device="cuda", requires_grad=True) for size in sizes]
    for param in params:
        param.grad = torch.randn_like(param)
    flags = {implementation: True}
    if algorithm.startswith("sgd"):
        momentum = 0.9 if algorithm == "sgd_momentum" else 0.0
        optimizer = torch.optim.SGD(params, lr=1e-3, momentum=momentum, **flags)
    else:
        make = torch.optim.Adam if algorithm == "adam" else torch.optim.AdamW
        optimizer = make(params, lr=1e-3, **flags)
    optimizer.step()
    return optimizer.step  # type: ignore[no-any-return]
