"""One measurement case (an op kind at one size, dtype and variant) and the LocalOp it
measures: the tensors and attrs each kind's case builds (what the models predict for it)."""

from __future__ import annotations

from dataclasses import dataclass

from opmodel.core.attrs import AttrValue, attr_specs
from opmodel.core.attrs_optimizer import OPTIMIZER_STATES
from opmodel.core.backward import backward_of
from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.op import LocalOp, TensorSpec
from opmodel.core.views import STRIDED
from opmodel.core.views_grouped import balanced_group_sizes

__all__ = ["Case", "grouped_sizes"]

_BINARY = frozenset({"add", "mul", "div"})
_OP_FUNCTION = {"gelu": "gelu_tanh"}  # grid function -> the op's function attr


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """One measurement: an op kind at one size, dtype and variant."""

    kind: OpKind
    dtype: DType
    sizes: tuple[tuple[str, int], ...]
    trans: str = "NN"
    function: str | None = None
    causal: bool = False
    backward: bool = False  # the op's backward pass (grid field ``backward``)
    # attention: how SDPA runs (grid field ``sdpa_backends``): as PyTorch picks, or "flash"
    sdpa_backend: str = "default"
    # add, mul, div: the second input as the first, [length] ("row") or [rows, 1]
    # ("column"); where: its condition so
    broadcast: str = "none"

    @property
    def size(self) -> dict[str, int]:
        """The sizes by name."""
        return dict(self.sizes)

    @property
    def optimizer_step(self) -> tuple[str, str]:
        """An optimizer case's ``(algorithm, implementation)``, its grid function
        ``algorithm/implementation`` (AdamW fused without one)."""
        algorithm, implementation = (self.function or "adamw/fused").split("/")
        return algorithm, implementation

    @property
    def label(self) -> str:
        """A short human-readable name, unique within a plan."""
        dims = " ".join(f"{k}={v}" for k, v in self.sizes)
        extra = {
            OpKind.GEMM: self.trans,
            OpKind.BATCHED_GEMM: self.trans,
            OpKind.GROUPED_GEMM: self.trans,
            OpKind.ELEMENTWISE: self.function or "",
            OpKind.OPTIMIZER: self.function or "",
            OpKind.ATTENTION_PREFILL: "causal" if self.causal else "full",
        }.get(self.kind, "")
        if self.sdpa_backend != "default":
            extra = f"{extra} {self.sdpa_backend}".strip()
        if self.backward:
            extra = f"{extra} backward".strip()
        if self.broadcast == "strided":
            extra = f"{extra} strided view".strip()
        elif self.broadcast != "none":
            extra = f"{extra} {self.broadcast} broadcast".strip()
        return f"{self.kind.value} {self.dtype.value} {dims} {extra}".strip()

    def op(self, flush_bytes: int = 0) -> LocalOp:
        """The LocalOp this case measures (what the models predict for it). ``flush_bytes``:
        what the L2 flush before each timed run wrote (``opmodel measure`` zeroes a buffer of
        twice the L2), which ops whose kind takes it carry as ``l2_dirty_bytes``."""
        build = {
            OpKind.GEMM: _gemm_tensors,
            OpKind.BATCHED_GEMM: _gemm_tensors,
            OpKind.GROUPED_GEMM: _grouped_tensors,
            OpKind.SOFTMAX: _row_tensors,
            OpKind.LAYERNORM: _row_tensors,
            OpKind.RMSNORM: _row_tensors,
            OpKind.ELEMENTWISE: _elementwise_tensors,
            OpKind.COPY: _copy_tensors,
            OpKind.EMBEDDING: _embedding_tensors,
            OpKind.CROSS_ENTROPY: _cross_entropy_tensors,
            OpKind.OPTIMIZER: _optimizer_tensors,
            OpKind.ATTENTION_PREFILL: _attention_tensors,
            OpKind.ATTENTION_DECODE: _attention_tensors,
        }[self.kind]
        tensors, attrs = build(self)
        if flush_bytes > 0 and "l2_dirty_bytes" in attr_specs(self.kind):
            attrs = {**attrs, "l2_dirty_bytes": flush_bytes}
        phase = Phase.DECODE if self.kind is OpKind.ATTENTION_DECODE else Phase.PREFILL
        if self.kind is OpKind.OPTIMIZER or (
            self.kind is OpKind.GROUPED_GEMM and self.trans == "TN"  # the weight gradients
        ):
            phase = Phase.TRAIN_BWD
        op = LocalOp(
            name=self.kind.value, kind=self.kind, phase=phase, tensors=tensors, attrs=attrs
        )
        return backward_of(op) if self.backward else op


_Built = tuple[tuple[TensorSpec, ...], dict[str, AttrValue]]


def _tensor(
    case: Case, role: TensorRole, shape: tuple[int, ...], layout: str | None = None
) -> TensorSpec:
    return TensorSpec(role, shape, case.dtype, layout)


def _gemm_tensors(case: Case) -> _Built:
    s = case.size
    lead = (s["batch"],) if case.kind is OpKind.BATCHED_GEMM else ()
    ta, tb = case.trans[0] == "T", case.trans[1] == "T"
    a = (*lead, s["k"], s["m"]) if ta else (*lead, s["m"], s["k"])
    b = (*lead, s["n"], s["k"]) if tb else (*lead, s["k"], s["n"])
    # torch._scaled_mm writes an FP8 GEMM's output in bf16 (the backend's out_dtype)
    out = DType.BF16 if case.dtype.family is DType.FP8 else case.dtype
    tensors = (
        _tensor(case, TensorRole.INPUT, a),
        _tensor(case, TensorRole.WEIGHT, b),
        TensorSpec(TensorRole.OUTPUT, (*lead, s["m"], s["n"]), out),
    )
    return tensors, {"transpose_a": ta, "transpose_b": tb}


def grouped_sizes(case: Case) -> list[int]:
    """A grouped case's rows per group: ``rows`` split as evenly as they go over the first
    ``active`` of ``groups``, none to the rest."""
    s = case.size
    return [*balanced_group_sizes(s["rows"], s["active"]), *[0] * (s["groups"] - s["active"])]


def _grouped_tensors(case: Case) -> _Built:
    """NT: A ``[rows, k]`` by ``[groups, n, k]`` (a linear layer's weights, ``transpose_b``),
    grouped along M; TN: the weight gradient, A ``[rows, k]`` transposed by B ``[rows, n]``
    into C ``[groups, k, n]``, grouped along K."""
    s = case.size
    sizes = tuple(grouped_sizes(case))
    if case.trans == "TN":
        wgrad = (
            _tensor(case, TensorRole.INPUT, (s["rows"], s["k"])),
            _tensor(case, TensorRole.WEIGHT, (s["rows"], s["n"])),
            _tensor(case, TensorRole.OUTPUT, (s["groups"], s["k"], s["n"])),
        )
        return wgrad, {"transpose_a": True, "group_sizes": sizes}
    tensors = (
        _tensor(case, TensorRole.INPUT, (s["rows"], s["k"])),
        _tensor(case, TensorRole.WEIGHT, (s["groups"], s["n"], s["k"])),
        _tensor(case, TensorRole.OUTPUT, (s["rows"], s["n"])),
    )
    return tensors, {"transpose_b": True, "group_sizes": sizes}


def _row_tensors(case: Case) -> _Built:
    """softmax (no weights), rmsnorm (gamma) and layernorm (gamma, beta) over rows x length."""
    weights = {OpKind.SOFTMAX: 0, OpKind.LAYERNORM: 2, OpKind.RMSNORM: 1}[case.kind]
    shape = (case.size["rows"], case.size["length"])
    tensors = (
        _tensor(case, TensorRole.INPUT, shape),
        *(_tensor(case, TensorRole.WEIGHT, shape[1:]) for _ in range(weights)),
        _tensor(case, TensorRole.OUTPUT, shape),
    )
    return tensors, {"implementation": "pytorch"}  # ATen's kernels run them


def _elementwise_tensors(case: Case) -> _Built:
    """``rows x length`` inputs (an add's, mul's or div's second one broadcast as
    ``case.broadcast`` says: ``[length]`` or ``[rows, 1]``) and output; where's bool
    condition (``int8``, one byte) so shaped, before its two operands. ``strided``: the last
    operand (a unary function's only one, where's second) a strided view, layout
    ``strided``."""
    shape = (case.size["rows"], case.size["length"])
    other = {"row": shape[1:], "column": (shape[0], 1)}.get(case.broadcast, shape)
    inputs = [shape, other] if case.function in _BINARY else [shape]
    if case.function == "where":
        inputs.append(shape)
    layouts: list[str | None] = [None] * len(inputs)
    if case.broadcast == "strided":
        layouts[-1] = STRIDED
    condition = (TensorSpec(TensorRole.INPUT, other, DType.INT8),)
    tensors = (
        *(condition if case.function == "where" else ()),
        *(_tensor(case, TensorRole.INPUT, s, x) for s, x in zip(inputs, layouts, strict=True)),
        _tensor(case, TensorRole.OUTPUT, shape),
    )
    function = case.function or "add"
    # the backend runs torch's tanh approximation for "gelu" (measure.backend)
    function = _OP_FUNCTION.get(function, function)
    return tensors, {"function": function, "implementation": "pytorch"}


def _copy_tensors(case: Case) -> _Built:
    """One ``rows x length`` tensor copied into another of the same dtype."""
    shape = (case.size["rows"], case.size["length"])
    return (_tensor(case, TensorRole.INPUT, shape), _tensor(case, TensorRole.OUTPUT, shape)), {}


def _embedding_tensors(case: Case) -> _Built:
    """``F.embedding`` of ``tokens`` int64 ids into a ``vocab x hidden`` table (ATen's
    index_select; the backend draws the ids at random over the vocabulary, as Vidur does)."""
    s = case.size
    tensors = (
        TensorSpec(TensorRole.INPUT, (s["tokens"],), DType.INT64),
        _tensor(case, TensorRole.WEIGHT, (s["vocab"], s["hidden"])),
        _tensor(case, TensorRole.OUTPUT, (s["tokens"], s["hidden"])),
    )
    return tensors, {"implementation": "pytorch"}


def _cross_entropy_tensors(case: Case) -> _Built:
    """``F.cross_entropy`` of ``rows x vocab`` logits against int64 targets, the mean loss
    (nn.CrossEntropyLoss's default; ATen's log_softmax then nll_loss)."""
    s = case.size
    tensors = (
        _tensor(case, TensorRole.INPUT, (s["rows"], s["vocab"])),
        TensorSpec(TensorRole.INPUT, (s["rows"],), DType.INT64),
        _tensor(case, TensorRole.OUTPUT, (1,)),
    )
    return tensors, {"implementation": "pytorch", "reduction": "mean"}


def _optimizer_tensors(case: Case) -> _Built:
    """``torch.optim``'s step (``functions``: ``algorithm/implementation``) over ``elements``
    parameters in ``tensors`` tensors; gradients and states in the parameters' dtype, as
    ``torch.optim`` keeps them."""
    algorithm, implementation = case.optimizer_step
    n = (case.size["elements"],)
    states = OPTIMIZER_STATES[algorithm]
    tensors = (
        _tensor(case, TensorRole.WEIGHT, n),
        _tensor(case, TensorRole.GRAD, n),
        *(_tensor(case, TensorRole.WORKSPACE, n) for _ in range(states)),
    )
    attrs: dict[str, AttrValue] = {
        "algorithm": algorithm,
        "implementation": implementation,
        "tensors": case.size["tensors"],
    }
    return tensors, attrs


def _attention_tensors(case: Case) -> _Built:
    """Q, K, V and O in (batch, heads, tokens, head_dim) with q/k/v/o layout tags."""
    s, prefill = case.size, case.kind is OpKind.ATTENTION_PREFILL
    q_len = s["seq"] if prefill else 1
    kv_len = s["seq"] if prefill else s["context"]
    b, h, kvh, hd = s["batch"], s["heads"], s["kv_heads"], s["head_dim"]
    tensors = (
        _tensor(case, TensorRole.INPUT, (b, h, q_len, hd), "q"),
        _tensor(case, TensorRole.INPUT, (b, kvh, kv_len, hd), "k"),
        _tensor(case, TensorRole.INPUT, (b, kvh, kv_len, hd), "v"),
        _tensor(case, TensorRole.OUTPUT, (b, h, q_len, hd), "o"),
    )
    attrs: dict[str, AttrValue] = {"causal": case.causal} if prefill else {}
    if case.sdpa_backend == "flash":  # PyTorch's built-in FlashAttention-2
        attrs["attention_kernel"] = "fa2"
    return tensors, attrs
