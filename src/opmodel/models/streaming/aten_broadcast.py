"""ATen's elementwise kernel for operands that are not all contiguous: a broadcast input, or a
strided view (an input tagged layout ``strided``: one half of ``torch.chunk(y, 2, -1)``).

An ATen elementwise op whose inputs are not all shaped as its output (``x + bias``, a mask
added to attention scores, a row scale) does not run ``vectorized_elementwise_kernel``:
``gpu_kernel_impl_nocast`` (CUDALoops.cuh) launches ``launch_legacy_kernel<128, vt>``, i.e.
``elementwise_kernel<128, vt>``, with ``vt`` = 4 elements a thread for an output of 2 bytes or
less and 2 for a wider one (``unroll_factor = sizeof(arg0_t) >= 4 ? 2 : 4``). A thread takes its
elements 128 apart, one after another: ``OffsetCalculator::get`` divides the element's index
by each of the iterator's coalesced dimensions (a multiply-high and a shift, then a
multiply-add per operand), the element's scalar loads go out, its function and store follow,
and only then the next element's arithmetic starts, so each element is one round trip in the
thread's chain and its instructions sit in that chain (``serial_arithmetic``). What a CTA
issues per element is counted from PyTorch's SASS
(``configs/instructions/aten_broadcast.yaml``, ``scripts/count_aten_broadcast_sass.py``):
``element_instructions + dim_instructions x dims`` for ``add``, ``mul``, ``div`` and ``where``
(a select, ``torch.where``: a bool condition and two operands) on sm_80, sm_86
(sm_89) and sm_90; other functions, dtypes and architectures have no count and no issue bound.

``dims`` is the iterator's dimensions after TensorIterator's coalescing
(:func:`coalesced_dims`): the output's size-1 dimensions dropped, then adjacent dimensions
merged wherever every operand's strides allow (the outer stride equals the inner stride times
the inner size; a broadcast dimension has stride 0 in that operand). ``[B, H, S, S] +
[B, 1, 1, S]`` keeps 3 (the inner ``S``, ``H x S`` merged, ``B``); ``[T, D] + [D]`` keeps 2. A
strided input's rows are not adjacent, so its innermost dimension merges with none: SiLU of
the first half of a ``[S, B, 2F]`` buffer keeps 2 (``F``, and ``S x B`` merged). Its bytes are
its elements' (each row is a contiguous run).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from opmodel.configs import INSTRUCTIONS_DIR
from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind
from opmodel.core.errors import ConfigError
from opmodel.core.views import STRIDED, ElementwiseView
from opmodel.models.shared.sass_code import is_rocm, sass_architecture
from opmodel.models.streaming.count_tables import function_table
from opmodel.models.streaming.kernels import aten_thread_loop
from opmodel.models.streaming.structure import StreamKernel
from opmodel.parsing.yamlfile import read_yaml_mapping

__all__ = [
    "BROADCAST_FILE",
    "BROADCAST_KERNEL",
    "broadcast_instructions",
    "broadcast_issue_cost",
    "broadcast_kernel",
    "coalesced_dims",
    "is_broadcast",
    "is_strided",
    "load_broadcast_counts",
    "runs_broadcast",
]

BROADCAST_FILE = INSTRUCTIONS_DIR / "aten_broadcast.yaml"
BROADCAST_KERNEL = "elementwise_kernel (ATen, non-contiguous operands)"
_FIELDS = ("element_instructions", "dim_instructions")

BroadcastCounts = dict[tuple[str, str, str], tuple[float, float]]


def is_broadcast(view: ElementwiseView) -> bool:
    """True when an input is not shaped as the output (it broadcasts)."""
    return any(x.shape != view.y.shape for x in view.inputs)


def is_strided(view: ElementwiseView) -> bool:
    """True when an input is a strided view (layout ``strided``)."""
    return any(x.layout == STRIDED for x in view.inputs)


def _strides(shape: tuple[int, ...], output: tuple[int, ...], strided: bool = False) -> list[int]:
    """An operand's element strides over the output's dimensions: contiguous over its own
    dimensions, 0 where it broadcasts (a size-1 or missing dimension); a strided view's rows
    twice as far apart as their length (any gap stops the merge its innermost dimension)."""
    aligned = (1,) * (len(output) - len(shape)) + shape
    strides, step = [0] * len(output), 1
    for i in reversed(range(len(output))):
        if aligned[i] != 1 or output[i] == 1:
            strides[i] = step if aligned[i] != 1 else 0
            step *= aligned[i] * (2 if strided and i == len(output) - 1 else 1)
    return strides


def coalesced_dims(
    output: tuple[int, ...],
    inputs: tuple[tuple[int, ...], ...],
    strided: tuple[bool, ...] = (),
) -> int:
    """The dimensions TensorIterator keeps for ``inputs`` broadcast to ``output``, those
    flagged in ``strided`` being strided views (module docstring); at least 1."""
    flags = strided or (False,) * len(inputs)
    operands = [_strides(output, output)]
    operands += [_strides(shape, output, flag) for shape, flag in zip(inputs, flags, strict=True)]
    kept = [d for d in range(len(output)) if output[d] != 1]
    if not kept:
        return 1
    dims, inner = 1, kept[-1]
    size = output[inner]
    for outer in reversed(kept[:-1]):
        if all(s[outer] == s[inner] * size for s in operands):
            size *= output[outer]
        else:
            dims, inner, size = dims + 1, outer, output[outer]
    return dims


def broadcast_kernel(
    elements: int, output_bytes: int, architecture: str | None = None
) -> StreamKernel:
    """``elementwise_kernel<128, vt>`` over ``elements`` (module docstring): 128 threads of
    ``vt`` elements, registers as ATen's other elementwise kernels (an estimate). On ROCm (an
    AMD ``architecture``) ``launch_legacy_kernel_manual_unroll`` takes 8 elements a thread (4
    for a 4-byte output) and computes every offset before any load, so they share one round
    trip."""
    if is_rocm(architecture):
        per_thread = 4 if output_bytes >= 4 else 8
        return aten_thread_loop(elements, per_thread, BROADCAST_KERNEL, round_trips=1)
    return aten_thread_loop(elements, 2 if output_bytes >= 4 else 4, BROADCAST_KERNEL)


def _pair(value: Any, where: str) -> tuple[float, float]:
    if not isinstance(value, dict) or set(value) != set(_FIELDS):
        raise ConfigError([f"{where}: must give {' and '.join(_FIELDS)}"])
    numbers = []
    for field in _FIELDS:
        number = value[field]
        if isinstance(number, bool) or not isinstance(number, int | float) or not number > 0:
            raise ConfigError([f"{where}.{field}: must be a number > 0 (got {number!r})"])
        numbers.append(float(number))
    return numbers[0], numbers[1]


def load_broadcast_counts(path: Path) -> BroadcastCounts:
    """Read and validate a broadcast counts file (module docstring); errors name the file and
    the field."""
    data = read_yaml_mapping(path)
    table = data.get("broadcast")
    if not isinstance(table, dict) or not isinstance(data.get("source"), str):
        raise ConfigError([f"{path}: needs the fields source (a string), broadcast"])
    return function_table(table, path, "broadcast", _pair)


@cache
def _shipped() -> BroadcastCounts:
    return load_broadcast_counts(BROADCAST_FILE)


def broadcast_instructions(
    architecture: str | None, dtype: DType, function: str | None, dims: int
) -> float | None:
    """Counted instructions per element of the kernel for ``function`` (an elementwise op's
    attr; ``add`` without one) on ``dtype`` with ``dims`` coalesced dimensions, or ``None``
    without a count."""
    arch = sass_architecture(architecture)
    pair = None if arch is None else _shipped().get((arch, dtype.value, function or "add"))
    return None if pair is None else pair[0] + pair[1] * dims


def runs_broadcast(kind: OpKind, view: object, implementation: object) -> bool:
    """True when ATen runs this kernel for the op: an elementwise op (``pytorch``, the
    default for elementwise ops) with a broadcast input or a strided view."""
    if kind is not OpKind.ELEMENTWISE or implementation not in (None, "pytorch"):
        return False
    return isinstance(view, ElementwiseView) and (is_broadcast(view) or is_strided(view))


def broadcast_issue_cost(view: ElementwiseView, architecture: str | None) -> float:
    """The kernel's counted instructions per element for ``view`` (0 without a count)."""
    strided = tuple(x.layout == STRIDED for x in view.inputs)
    dims = coalesced_dims(view.y.shape, tuple(x.shape for x in view.inputs), strided)
    counted = broadcast_instructions(architecture, view.y.dtype, view.function, dims)
    return 0.0 if counted is None else counted
