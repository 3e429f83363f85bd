"""The typed schema of op attributes, per op kind, and their validation.

``LocalOp.attrs`` is free-form at the API boundary but checked here once, at construction:
unknown names are errors with a did-you-mean, booleans must be real booleans, integers must be
integers within range and strings one of the accepted values; models read typed values."""

from __future__ import annotations

from collections.abc import Mapping

from opmodel.core.attr_spec import AttrSpec
from opmodel.core.attrs_attention import ATTENTION, KV_LENGTHS, PREFILL_LENGTHS
from opmodel.core.attrs_collective import COLLECTIVE
from opmodel.core.attrs_optimizer import OPTIMIZER
from opmodel.core.attrs_reduction import REDUCTION
from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind
from opmodel.core.errors import did_you_mean
from opmodel.core.frozen_attrs import AttrValue, FrozenAttrs

__all__ = [
    "ELEMENTWISE_FLOPS_PER_ELEMENT",
    "AttrSpec",
    "AttrValue",
    "FrozenAttrs",
    "attr_specs",
    "int_attr",
    "validate_attrs",
]

# FLOPs charged per output element by elementwise function. Counting convention (documented in
# docs/models/roofline.md): one FLOP per add/sub/mul/div/compare/max; transcendental functions
# (exp, tanh, erf) count one FLOP each on the vector engine; composite activations count their
# scalar operations, e.g. silu(x) = x * sigmoid(x) = x / (1 + exp(-x)): neg, exp, add, div = 4;
# gelu (tanh form, Hendrycks & Gimpel 2016) 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))):
# 3 mul for the x^3 term, add, mul, tanh, add, 2 mul = 9.
ELEMENTWISE_FLOPS_PER_ELEMENT: Mapping[str, int] = {
    "add": 1,
    "sub": 1,
    "mul": 1,
    "div": 1,
    "maximum": 1,
    "minimum": 1,
    "scalar_add": 1,
    "scalar_mul": 1,
    "relu": 1,
    "relu_squared": 2,  # max(x, 0), then its square (Primer, So et al. 2021)
    "neg": 1,
    "exp": 1,
    "tanh": 1,
    "sigmoid": 3,
    "silu": 4,
    "gelu": 9,
    "gelu_tanh": 9,  # the tanh approximation (torch's approximate="tanh", GPT-2's gelu_new)
    "silu_and_mul": 5,
    "gelu_and_mul": 10,
    "gelu_tanh_and_mul": 10,  # gelu_tanh(a) * b: Liger's GEGLU, vLLM's gelu_tanh_and_mul
    "fma": 2,
    "where": 1,  # torch.where(cond, a, b): a select, one FLOP like a compare
    "cast": 1,
    "rope": 3,
    "dropout": 2,
    # backward passes, inputs (x or the forward's output y, then dy), one output dx:
    # relu: compare, select = 2; sigmoid from y: dy y (1 - y) = 3; tanh from y: dy (1 - y^2) = 3;
    # silu from x: s = sigmoid(x) (4), dy s (1 + x (1 - s)) (5) = 9; gelu (tanh form) from x:
    # x^2, x^3, the inner FMA (2), tanh, 1 + t, 1 - t^2 (2), 1 + 3c x^2 (2), the products (4)
    # and dy = 15
    "relu_backward": 2,
    "sigmoid_backward": 3,
    "tanh_backward": 3,
    "silu_backward": 9,
    "gelu_backward": 15,
}


def _ints(names: tuple[str, ...], doc: str) -> tuple[AttrSpec, ...]:
    return tuple(AttrSpec(name=n, kind=int, minimum=1, doc=doc) for n in names)


_COMMON = (
    AttrSpec(
        name="compute_dtype",
        kind=str,
        choices=tuple(d.value for d in DType),
        doc="data type the arithmetic runs in (default: see the op kind)",
    ),
)
# a benchmark's L2 flush by writing a buffer (torch ``zero_()`` in opmodel measure, Triton's
# do_bench) leaves the L2 full of dirty lines, which the timed kernel's traffic evicts
_L2_DIRTY = AttrSpec(
    name="l2_dirty_bytes",
    kind=int,
    minimum=0,
    doc="bytes another kernel wrote just before this one that are not its inputs, e.g. a "
    "benchmark's L2 flush that writes a buffer (Triton's do_bench: 268435456); the dirty lines "
    "this kernel's traffic evicts are written back to DRAM, which lengthens a bandwidth-bound "
    "kernel (default 0); the kernel-level GEMM models and effective_roofline's streaming and "
    "attention kernels",
)
_GEMM = (
    AttrSpec(name="transpose_a", kind=bool, doc="A is stored [k, m]"),
    AttrSpec(name="transpose_b", kind=bool, doc="B is stored [n, k]"),
    AttrSpec(name="beta_zero", kind=bool, doc="C = A @ B (true, default) or C = A @ B + beta C"),
    *_ints(
        (
            "cta_tile_m",
            "cta_tile_n",
            "cta_tile_k",
            "warp_tile_m",
            "warp_tile_n",
            "warp_tile_k",
            "pipeline_stages",
            "warps_per_cta",
            "registers_per_thread",
            "split_k",
            "resident_ctas_per_sm",
            "raster_swizzle",
            "gemm_selection_shortlist_size",
        ),
        "kernel parameter used by kernel-level GEMM models; ignored by the roofline",
    ),
    AttrSpec(
        name="gemm_selection_backend",
        kind=str,
        choices=("effective_roofline",),
        doc="model that ranks the kernel shortlist",
    ),
    AttrSpec(
        name="gemm_selection_objective",
        kind=str,
        choices=("latency", "energy"),
        doc="what automatic kernel selection minimises",
    ),
)
_GROUPED = AttrSpec(
    name="group_sizes",
    kind=tuple,
    minimum=0,
    doc="rows (token-expert pairs) each group (expert) takes, in group order: one entry per "
    "group (B's first dim when grouped along M, C's when grouped along K), summing to the "
    "grouped rows (A's rows, or the contraction); 0 for a group no row is routed to (its "
    "weights are not read). Default: the rows split as evenly as the groups allow",
)
STREAMING_IMPLEMENTATIONS = ("fused", "vllm", "pytorch")
_IMPLEMENTATION = AttrSpec(
    name="implementation",
    kind=str,
    choices=STREAMING_IMPLEMENTATIONS,
    doc="who wrote the kernel, for kernel-level models (docs/models/streaming.md)",
)
_WARM = (
    AttrSpec(
        name="warm_l2",
        kind=bool,
        doc="every input tensor was written by the previous kernel, so part of it may still be "
        "in L2 and the L2's dirty lines are known (default false: read cold from DRAM, every "
        "written byte charged to DRAM during the run); kernel-level models only",
    ),
    AttrSpec(
        name="warm_input",
        kind=int,
        minimum=0,
        doc="position among the op's input tensors (0-based) of the one input the previous "
        "kernel wrote; the others are cold (exclusive with warm_l2)",
    ),
    AttrSpec(
        name="producer_bytes",
        kind=int,
        minimum=1,
        doc="bytes the previous kernel moved (reads and writes, its output included; default: "
        "the warm inputs' bytes), with warm_l2 or warm_input",
    ),
    AttrSpec(
        name="producer_waves",
        kind=int,
        minimum=1,
        doc="the previous kernel wrote the warm input in this many equal bursts, one at the end "
        "of each of its waves, as a tiled GEMM stores its output tiles in their CTAs' epilogues "
        "(its profile's diagnostics.grid: full_waves, plus one for tail_ctas); default: written "
        "evenly as it ran, as a streaming kernel does. With warm_l2 or warm_input",
    ),
)
_ROW = (
    AttrSpec(name="row_length", kind=int, minimum=1, doc="elements per row (default: last dim)"),
    _IMPLEMENTATION,
    *_WARM,
)
_REDUCTION = (*REDUCTION, *_WARM)
_ATEN_VECTORS = AttrSpec(
    name="aten_128bit_vectors",
    kind=bool,
    doc="ATen's vectorized elementwise kernel loads 16 bytes per thread and input, 8 elements "
    "of a 16-bit dtype (vectorized_elementwise_kernel<8>: PyTorch's 128-bit vectorization, PR "
    "#145746 of January 2025; PyTorch 2.11 on an H200 under Nsight Compute); default false: 4 "
    "elements per thread, as PyTorch 2.3 (Vidur's profiles) and earlier. The pytorch "
    "elementwise and copy structure of kernel-level models",
)
_LOG_SOFTMAX = AttrSpec(
    name="log_softmax",
    kind=bool,
    doc="the op is a log-softmax (log of the softmax): its ATen backward (phase train_bwd, "
    "implementation pytorch) runs the backward kernel alone, without softmax's grad * output "
    "multiply (SoftMax.cu, log_softmax_backward_cuda_out); default false",
)
_SOFTMAX_VECTORS = AttrSpec(
    name="aten_128bit_vectors",
    kind=bool,
    doc="as for elementwise ops, for the grad * output multiply that ATen's softmax backward "
    "runs before its backward kernel (phase train_bwd, implementation pytorch); default false",
)
_ELEMENTWISE = (
    AttrSpec(
        name="function",
        kind=str,
        choices=tuple(ELEMENTWISE_FLOPS_PER_ELEMENT),
        doc="elementwise function (default: one FLOP per output element per extra input)",
    ),
    _IMPLEMENTATION,
    _ATEN_VECTORS,
    *_WARM,
)

_LOSS_IMPLEMENTATION = AttrSpec(
    name="implementation",
    kind=str,
    choices=("pytorch", "fused"),
    doc="pytorch: log_softmax then nll_loss (two ATen kernels); fused: one kernel per row that "
    "also writes the logits' gradient in place (Liger-Kernel); docs/models/streaming.md",
)

_LOSS_REDUCTION = AttrSpec(
    name="reduction",
    kind=str,
    choices=("mean", "sum", "none"),
    doc="the loss over the rows (mean or sum: one element) or per row (none); default: a "
    "one-element loss output is reduced",
)

_DISTINCT_INDICES = AttrSpec(name="distinct_indices", kind=int, minimum=1, doc="an embedding's "
    "backward pass: the distinct rows its indices name (default: the expectation of a uniform "
    "draw; docs/models/streaming.md, 'Embedding backward')")  # fmt: skip

_BY_KIND: dict[OpKind, dict[str, AttrSpec]] = {
    kind: {spec.name: spec for spec in (*_COMMON, *extra)}
    for kind, extra in (
        (OpKind.GEMM, (*_GEMM, _L2_DIRTY)),
        (OpKind.BATCHED_GEMM, (*_GEMM, _L2_DIRTY)),
        (OpKind.GROUPED_GEMM, (*_GEMM, _GROUPED, _L2_DIRTY)),
        (OpKind.ATTENTION_PREFILL, (*ATTENTION, *PREFILL_LENGTHS, _L2_DIRTY)),
        (OpKind.ATTENTION_DECODE, (*ATTENTION, KV_LENGTHS, _L2_DIRTY)),
        (OpKind.SOFTMAX, (*_ROW, _L2_DIRTY, _SOFTMAX_VECTORS, _LOG_SOFTMAX)),
        (OpKind.LAYERNORM, (*_ROW, _L2_DIRTY)),
        (OpKind.RMSNORM, (*_ROW, _L2_DIRTY)),
        (OpKind.ELEMENTWISE, (*_ELEMENTWISE, _L2_DIRTY)),
        (OpKind.REDUCTION, (*_REDUCTION, _L2_DIRTY)),
        (OpKind.EMBEDDING, (_IMPLEMENTATION, *_WARM, _L2_DIRTY, _DISTINCT_INDICES)),
        (OpKind.COPY, (_ATEN_VECTORS, *_WARM, _L2_DIRTY)),
        (OpKind.CROSS_ENTROPY, (_LOSS_IMPLEMENTATION, _LOSS_REDUCTION, _L2_DIRTY)),
        (OpKind.COLLECTIVE, COLLECTIVE),
        (OpKind.OPTIMIZER, OPTIMIZER),
    )
}


def int_attr(attrs: Mapping[str, AttrValue], name: str, default: int = 0) -> int:
    """The integer attribute ``name`` (validated at the op's construction), or ``default``."""
    value = attrs.get(name, default)
    assert isinstance(value, int)
    return value


def attr_specs(kind: OpKind) -> Mapping[str, AttrSpec]:
    """The attributes accepted for ``kind``, by name."""
    return _BY_KIND[kind]


def validate_attrs(kind: OpKind, attrs: Mapping[str, object]) -> list[str]:
    """Return one ``attrs.NAME: problem`` line per invalid attribute (empty when all are valid)."""
    specs = _BY_KIND[kind]
    problems: list[str] = []
    for name, value in attrs.items():
        if not isinstance(name, str):
            problems.append(f"attrs: names must be strings (got {name!r})")
            continue
        spec = specs.get(name)
        if spec is None:
            accepted = ", ".join(sorted(specs))
            hint = did_you_mean(name, specs)
            problems.append(
                f"attrs.{name}: unknown attribute for {kind.value}{hint} (accepted: {accepted})"
            )
            continue
        problem = spec.check(value)
        if problem is not None:
            problems.append(f"attrs.{name}: {problem}")
    return problems
