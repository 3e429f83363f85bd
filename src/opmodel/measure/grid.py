"""Measurement grids: which ops, shapes and dtypes ``opmodel measure`` runs (YAML).

```yaml
name: h200_8min
warmup: 10            # untimed runs before timing each case
repeats: 30           # timed runs; the median is reported
flush_l2: true        # overwrite an L2-sized buffer before each timed run
flush_idle_us: 0      # then keep the GPU idle this long (a spin kernel) before the timed run
energy: true          # NVML total-energy counter over a loop of >= energy_loop_s
energy_loop_s: 0.2
kernel_timing: false  # also time the kernels alone under the PyTorch profiler (kernel_time)
ops:
  - kind: gemm
    sizes: {m: [16, 4096], n: [4096], k: [4096]}
    dtypes: [bf16]
    trans: [NN, NT]
  - kind: attention_prefill
    sizes: {batch: [1], heads: [32], kv_heads: [8], seq: [2048], head_dim: [128]}
    backward: [false, true]   # also its backward pass (attention_prefill, row ops, embedding)
    sdpa_backends: [default, flash]   # also PyTorch's FlashAttention-2 (attention only)
```

Every combination of an entry's sizes (and dtypes, trans, functions, causal and backward flags,
SDPA backends, broadcasts) is one case. A backward case times the op's backward pass alone: the
forward runs once, untimed, and each timed run is ``torch.autograd.grad`` of its output with
a fixed incoming gradient (docs/measure.md). A ``flash`` attention case runs SDPA inside
``sdpa_kernel(SDPBackend.FLASH_ATTENTION)``: PyTorch's built-in FlashAttention-2, which its
rows name with ``attention_kernel: fa2``.
``grouped_gemm`` multiplies ``rows`` rows by ``groups`` experts' weights in one
``torch._grouped_mm`` call (PyTorch 2.8 and later, bf16, sm_90 and later), the rows split as
evenly as they go over the first ``active`` experts and none to the rest: ``active`` below
``groups`` is a decode step that reaches few experts, or a skewed routing. Its ``trans`` is NT
(the default: A ``[rows, k]`` by the experts' ``[groups, n, k]`` weights) or TN (their weight
gradient: A ``[rows, k]`` transposed by B ``[rows, n]`` into ``[groups, k, n]``, grouped
along K).
``copy`` is a device-to-device copy of a ``rows x length`` tensor into another of the same
dtype (``Tensor.copy_``): no arithmetic, so its time gives the bandwidth a stream sustains on
the GPU, the reference the models' DRAM peak is checked against (docs/validation.md,
"Sustained HBM bandwidth").
Sizes each kind needs are in :data:`REQUIRED_SIZES`. Shipped grids live in
``opmodel/configs/measure`` and load by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from opmodel.configs import MEASURE_DIR
from opmodel.core.attrs_optimizer import OPTIMIZER_ALGORITHMS, OPTIMIZER_IMPLEMENTATIONS
from opmodel.core.backward import BACKWARD_KINDS
from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind
from opmodel.core.errors import ConfigError, UnknownNameError, unknown_name_message
from opmodel.measure.grid_rules import fp8_problems, grouped_problems
from opmodel.parsing.schema import MUST_BE_NON_NEGATIVE, MUST_BE_POSITIVE, parse_dataclass
from opmodel.parsing.yamlfile import read_yaml_mapping

__all__ = [
    "BACKWARD_KINDS",
    "BROADCASTS",
    "ENERGY_LOOP_MIN_S",
    "FLUSH_L2_MULTIPLE",
    "MEASURED_DTYPES",
    "MEASURED_FUNCTIONS",
    "MEASURED_OPTIMIZERS",
    "REQUIRED_SIZES",
    "SDPA_BACKENDS",
    "MeasureGrid",
    "OpGrid",
    "load_grid",
    "shipped_grid_names",
]

_DIR = MEASURE_DIR

FLUSH_L2_MULTIPLE = 2
"""With ``flush_l2`` a buffer of this many times the L2 size is zeroed before each timed run:
what the backend allocates, what the estimate charges and what the datasets record as
``l2_dirty_bytes``."""

ENERGY_LOOP_MIN_S = 0.2
"""NVML's total-energy counter updates about every 10 ms; a loop of 200 ms or more keeps the
quantisation under 5 % (shared/hardware/README.md, measurement limits)."""

REQUIRED_SIZES: Mapping[OpKind, tuple[str, ...]] = {
    OpKind.GEMM: ("m", "n", "k"),
    OpKind.BATCHED_GEMM: ("batch", "m", "n", "k"),
    OpKind.GROUPED_GEMM: ("groups", "active", "rows", "n", "k"),
    OpKind.SOFTMAX: ("rows", "length"),
    OpKind.LAYERNORM: ("rows", "length"),
    OpKind.RMSNORM: ("rows", "length"),
    OpKind.ELEMENTWISE: ("rows", "length"),
    OpKind.COPY: ("rows", "length"),
    OpKind.EMBEDDING: ("tokens", "hidden", "vocab"),
    OpKind.CROSS_ENTROPY: ("rows", "vocab"),
    OpKind.OPTIMIZER: ("elements", "tensors"),
    OpKind.ATTENTION_PREFILL: ("batch", "heads", "kv_heads", "seq", "head_dim"),
    OpKind.ATTENTION_DECODE: ("batch", "heads", "kv_heads", "context", "head_dim"),
}

MEASURED_OPTIMIZERS = tuple(
    f"{algorithm}/{implementation}"
    for algorithm in OPTIMIZER_ALGORITHMS
    for implementation in OPTIMIZER_IMPLEMENTATIONS
)
"""The optimizer steps measured (a grid's ``functions`` for kind optimizer): ``torch.optim``'s
SGD (momentum 0 or 0.9), Adam and AdamW at their default hyperparameters, with ``fused=True``
or ``foreach=True``."""

MEASURED_FUNCTIONS = (
    "add",
    "mul",
    "div",
    "where",
    "relu",
    "exp",
    "tanh",
    "sigmoid",
    "silu",
    "gelu",
)
"""Elementwise functions measured as one PyTorch kernel each (composites such as
silu_and_mul run as several kernels in eager PyTorch and are left out)."""

_TRANS = ("NN", "NT", "TN", "TT")
BROADCASTS = ("none", "row", "column", "strided")
"""An add's, mul's or div's second input (where's condition): shaped as the first, ``[length]``
(a bias over the rows) or ``[rows, 1]`` (a per-row scale); or, for any function, its last
operand a strided view (``strided``: one half of a ``[rows, 2 x length]`` buffer, as
``torch.chunk`` hands it out): ATen's non-contiguous kernel for the last three."""

BROADCAST_FUNCTIONS = ("add", "mul", "div", "where")
"""The functions a ``broadcast`` other than ``none`` applies to."""

SDPA_BACKENDS = ("default", "flash")
"""How an attention case calls ``scaled_dot_product_attention``: as PyTorch picks (cuDNN on
sm_90 with PyTorch 2.11), or inside ``sdpa_kernel(SDPBackend.FLASH_ATTENTION)``, PyTorch's
built-in FlashAttention-2 (the rows carry ``attention_kernel: fa2``)."""

MEASURED_DTYPES = (DType.BF16, DType.FP16, DType.FP32, DType.TF32, DType.FP8_E4M3)
"""Dtypes the PyTorch backend runs (tf32: fp32 tensors with TF32 matmuls allowed; fp8_e4m3:
GEMMs only, through ``torch._scaled_mm`` with unit scales and a bf16 output)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class OpGrid:
    """One op kind over the cartesian product of its sizes and variants."""

    kind: OpKind
    sizes: Mapping[str, tuple[int, ...]]
    dtypes: tuple[DType, ...] = (DType.BF16,)
    trans: tuple[str, ...] = ("NN",)
    functions: tuple[str, ...] = ()
    causal: tuple[bool, ...] = (True,)
    backward: tuple[bool, ...] = (False,)
    sdpa_backends: tuple[str, ...] = ("default",)
    broadcast: tuple[str, ...] = ("none",)  # add, mul: the second input [length] or [rows, 1]


@dataclass(frozen=True, slots=True, kw_only=True)
class MeasureGrid:
    """A whole measurement plan: timing settings and the op grids."""

    name: str
    description: str | None = None
    warmup: int = field(default=10, metadata=MUST_BE_POSITIVE)
    repeats: int = field(default=30, metadata=MUST_BE_POSITIVE)
    flush_l2: bool = True
    # an idle wait after the flush, whether its dirty lines drain (docs/measure.md)
    flush_idle_us: float = field(default=0.0, metadata=MUST_BE_NON_NEGATIVE)
    energy: bool = True
    energy_loop_s: float = field(default=ENERGY_LOOP_MIN_S, metadata=MUST_BE_POSITIVE)
    kernel_timing: bool = False
    ops: tuple[OpGrid, ...]


def _size_problems(path: str, entry: OpGrid, required: tuple[str, ...]) -> list[str]:
    kind = entry.kind.value
    missing = [
        f"{path}.sizes.{name}: required for {kind} (a list of sizes)"
        for name in required
        if not entry.sizes.get(name)
    ]
    extra = [
        f"{path}.sizes.{name}: not a size of {kind} (sizes: {', '.join(required)})"
        for name in sorted(set(entry.sizes) - set(required))
    ]
    bad = [
        f"{path}.sizes.{name}[{index}]: must be > 0 (got {value})"
        for name, values in entry.sizes.items()
        for index, value in enumerate(values)
        if value <= 0
    ]
    return missing + extra + bad


def _choice_problems(
    path: str, field_name: str, values: tuple[str, ...], accepted: tuple[str, ...]
) -> list[str]:
    allowed = ", ".join(accepted)
    return [
        f"{path}.{field_name}: must be one of {allowed} (got '{value}')"
        for value in values
        if value not in accepted
    ]


def _op_problems(index: int, entry: OpGrid) -> list[str]:
    path = f"ops[{index}]"
    required = REQUIRED_SIZES.get(entry.kind)
    if required is None:
        kinds = ", ".join(k.value for k in REQUIRED_SIZES)
        return [f"{path}.kind: cannot measure {entry.kind.value} (measurable: {kinds})"]
    dtypes = tuple(d.value for d in entry.dtypes)
    problems = _size_problems(path, entry, required)
    problems += _choice_problems(path, "dtypes", dtypes, tuple(d.value for d in MEASURED_DTYPES))
    problems += _choice_problems(path, "trans", entry.trans, _TRANS)
    named = {OpKind.ELEMENTWISE: MEASURED_FUNCTIONS, OpKind.OPTIMIZER: MEASURED_OPTIMIZERS}
    if entry.kind in named:
        accepted = named[entry.kind]
        if not entry.functions:
            kind = entry.kind.value
            problems.append(f"{path}.functions: required for {kind} ({', '.join(accepted)})")
        problems += _choice_problems(path, "functions", entry.functions, accepted)
    if entry.kind is OpKind.GROUPED_GEMM:
        problems += grouped_problems(path, entry)
    problems += fp8_problems(path, entry)
    problems += _choice_problems(path, "sdpa_backends", entry.sdpa_backends, SDPA_BACKENDS)
    attention = entry.kind in (OpKind.ATTENTION_PREFILL, OpKind.ATTENTION_DECODE)
    if entry.sdpa_backends != ("default",) and not attention:
        problems.append(f"{path}.sdpa_backends: attention_prefill and attention_decode only")
    problems += _choice_problems(path, "broadcast", entry.broadcast, BROADCASTS)
    binary = set(entry.functions) <= set(BROADCAST_FUNCTIONS)
    shaped = set(entry.broadcast) & {"row", "column"}
    if entry.broadcast != ("none",) and entry.kind is not OpKind.ELEMENTWISE:
        problems.append(f"{path}.broadcast: elementwise ops only")
    elif shaped and not binary:
        problems.append(f"{path}.broadcast: row and column for {', '.join(BROADCAST_FUNCTIONS)}")
    if any(entry.backward) and entry.kind not in BACKWARD_KINDS:
        kinds = ", ".join(k.value for k in BACKWARD_KINDS)
        problems.append(f"{path}.backward: only {kinds} have a measured backward pass")
    return problems


def grid_problems(grid: MeasureGrid) -> list[str]:
    """Rules across fields: sizes per kind, functions, trans, the energy loop length."""
    problems = [p for i, entry in enumerate(grid.ops) for p in _op_problems(i, entry)]
    if not grid.ops:
        problems.append("ops: expected at least one op grid (got [])")
    if grid.flush_idle_us > 0 and not grid.flush_l2:
        idle = grid.flush_idle_us
        problems.append(
            f"flush_idle_us: waits after the L2 flush, needs flush_l2: true (got {idle})"
        )
    if grid.energy and grid.energy_loop_s < ENERGY_LOOP_MIN_S:
        problems.append(
            f"energy_loop_s: must be >= {ENERGY_LOOP_MIN_S} s, the NVML energy counter's "
            f"resolution needs it (got {grid.energy_loop_s})"
        )
    return problems


def shipped_grid_names() -> list[str]:
    """Names of the grids shipped with the package, sorted."""
    return sorted(p.stem for p in _DIR.glob("*.yaml"))


def load_grid(path_or_name: str | Path) -> MeasureGrid:
    """A grid from a YAML path or a shipped name; ConfigError with every problem otherwise."""
    text = str(path_or_name)
    if isinstance(path_or_name, Path) or text.endswith((".yaml", ".yml")) or "/" in text:
        path = Path(path_or_name)
    else:
        path = _DIR / f"{text}.yaml"
        if not path.is_file():
            names = shipped_grid_names()
            raise UnknownNameError(unknown_name_message("measurement grid", text, names))
    if not path.is_file():
        raise ConfigError([f"{path}: file not found"])
    errors: list[str] = []
    grid = parse_dataclass(MeasureGrid, read_yaml_mapping(path), errors)
    if grid is not None:
        errors += grid_problems(grid)
    if errors or grid is None:
        raise ConfigError(f"{path}: {problem}" for problem in errors)
    assert isinstance(grid, MeasureGrid)
    return grid
