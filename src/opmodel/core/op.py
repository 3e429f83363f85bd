"""The op vocabulary: :class:`TensorSpec` and :class:`LocalOp`, validated at construction."""

from __future__ import annotations

import operator
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, SupportsIndex, TypeVar, cast

from opmodel.core.attrs import AttrValue, FrozenAttrs, validate_attrs
from opmodel.core.dtypes import DType, nbytes_of
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.errors import OpValidationError, did_you_mean, shown
from opmodel.core.frozen_attrs import plain_attrs
from opmodel.core.profile import Footprint, footprint_of
from opmodel.core.values import state_without_cache
from opmodel.core.views import AttentionView, OpView, build_view

__all__ = ["MAX_TENSOR_ELEMENTS", "LocalOp", "TensorSpec", "coerce_enum", "integer_of", "tensor_at"]

_E = TypeVar("_E", bound=StrEnum)


def coerce_enum(enum_cls: type[_E], value: object, where: str) -> _E:
    """Convert ``value`` (an enum member or its string) to ``enum_cls`` or raise a clear error."""
    if isinstance(value, enum_cls):
        return value
    if isinstance(value, str):
        try:
            return enum_cls(value)
        except ValueError:
            pass
    valid = [m.value for m in enum_cls]
    hint = did_you_mean(value, valid) if isinstance(value, str) else ""
    raise OpValidationError(f"{where}: must be one of {', '.join(valid)} (got {value!r}){hint}")


# the most elements a tensor may hold: what a signed 64-bit index addresses (PyTorch's and
# CUDA's int64 indexing); larger shapes come from a typo and would overflow float arithmetic
MAX_TENSOR_ELEMENTS = 2**63 - 1


def integer_of(dim: object) -> int | None:
    """``dim`` as a Python int when it is an integer that is not a boolean: an int or any
    integer type with ``__index__`` (numpy's ``int64``, ``uint32``, ...); else None."""
    if type(dim) is int:
        return dim
    # hasattr on the type: what isinstance(dim, SupportsIndex) checks, without the cost of a
    # runtime Protocol check (about 3 µs a call)
    if isinstance(dim, bool) or not hasattr(type(dim), "__index__"):
        return None
    try:
        return operator.index(cast(SupportsIndex, dim))
    except TypeError:  # numpy's bool has __index__ and refuses
        return None


def _check_shape(shape: object, where: str) -> tuple[int, ...]:
    """The shape as a tuple of Python ints. Lists, tuples and numpy arrays (anything whose
    ``tolist()`` gives a list) of integers, numpy's included, are accepted, so that shapes
    computed with numpy need no conversion; floats, booleans and strings are errors."""
    if type(shape) is tuple and shape and all(type(d) is int and d > 0 for d in shape):
        return shape  # the common case, checked without the error paths below
    listed = getattr(shape, "tolist", None)
    if callable(listed) and not isinstance(shape, tuple | list):
        shape = listed()
    if isinstance(shape, str | bytes) or not isinstance(shape, tuple | list):
        raise OpValidationError(
            f"{where}: must be a list or tuple of positive integers (got {shape!r})"
        )
    if len(shape) == 0:
        raise OpValidationError(f"{where}: must have at least one dimension (got {shape!r})")
    dims = tuple(dim for dim in map(integer_of, shape) if dim is not None and dim > 0)
    if len(dims) != len(shape):
        raise OpValidationError(
            f"{where}: every dimension must be a positive integer (got {shape!r})"
        )
    return dims


def tensor_at(
    prefix: str, role: object, shape: object, dtype: object, layout: object = None
) -> TensorSpec:
    """``TensorSpec(role, shape, dtype, layout)`` read from a file: a problem names the
    tensor's place there, ``prefix``, in place of ``TensorSpec.``, so that
    ``TensorSpec.shape: ...`` reads ``tensors[0].shape: ...`` (``prefix = "tensors[0]."``)."""
    try:
        return TensorSpec(role, shape, dtype, layout)  # type: ignore[arg-type]
    except OpValidationError as exc:
        text = str(exc)
        if text.startswith("TensorSpec."):
            text = prefix + text[len("TensorSpec.") :]
        raise OpValidationError(text) from None


@dataclass(frozen=True, slots=True)
class TensorSpec:
    """A tensor an op touches: its role, shape (elements per dim), dtype and optional layout tag.

    ``layout`` is a free-form tag; attention uses ``q``/``k``/``v``/``o`` to name its operands.
    ``num_elements`` and ``nbytes`` are derived at construction.
    """

    role: TensorRole
    shape: tuple[int, ...]
    dtype: DType
    layout: str | None = None
    num_elements: int = field(init=False, repr=False, compare=False)
    nbytes: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "role", coerce_enum(TensorRole, self.role, "TensorSpec.role"))
        set_(self, "dtype", coerce_enum(DType, self.dtype, "TensorSpec.dtype"))
        shape = _check_shape(self.shape, "TensorSpec.shape")
        set_(self, "shape", shape)
        if self.layout is not None and not isinstance(self.layout, str):
            raise OpValidationError(
                f"TensorSpec.layout: must be a string or None (got {self.layout!r})"
            )
        count = 1
        for dim in shape:
            count *= dim
        if count > MAX_TENSOR_ELEMENTS:
            raise OpValidationError(
                "TensorSpec.shape: at most 2^63 - 1 elements, the 64-bit index limit "
                f"(got about 10^{len(str(count)) - 1} from {shown(list(shape))})"
            )
        set_(self, "num_elements", count)
        set_(self, "nbytes", nbytes_of(count, self.dtype))


def _checked_attrs(kind: OpKind, attrs: object, where: str) -> FrozenAttrs:
    """An op's attrs checked against its kind's schema (numpy values made plain first:
    :func:`~opmodel.core.frozen_attrs.plain_attrs`), frozen; an immutable FrozenAttrs is shared
    as it is."""
    if not isinstance(attrs, Mapping):
        raise OpValidationError(f"{where}: attrs: must be a mapping (got {attrs!r})")
    if type(attrs) is not FrozenAttrs:
        attrs = plain_attrs(attrs)
    problems = validate_attrs(kind, attrs)
    if problems:
        raise OpValidationError(f"{where} ({kind.value}): {'; '.join(problems)}")
    return attrs if type(attrs) is FrozenAttrs else FrozenAttrs(attrs)  # type: ignore[arg-type]


def _check_warm_attrs(op: LocalOp, where: str) -> None:
    """``warm_input`` names an existing input and excludes ``warm_l2``; ``producer_bytes`` and
    ``producer_waves`` need one of them, ``producer_bytes`` at least the warm inputs' bytes."""
    attrs = op.attrs
    inputs = len(op.tensors_with(TensorRole.INPUT))
    index = attrs.get("warm_input")
    if isinstance(index, int) and index >= inputs:
        raise OpValidationError(
            f"{where} ({op.kind.value}): attrs.warm_input: must be the position of one of the "
            f"op's {inputs} input tensors, 0 to {inputs - 1} (got {index})"
        )
    if index is not None and attrs.get("warm_l2") is True:
        raise OpValidationError(
            f"{where} ({op.kind.value}): attrs.warm_input: cannot be combined with "
            "warm_l2: true (warm_l2 already marks every input warm)"
        )
    if "producer_waves" in attrs and index is None and attrs.get("warm_l2") is not True:
        raise OpValidationError(
            f"{where} ({op.kind.value}): attrs.producer_waves: needs warm_l2: true or "
            "warm_input (it describes the kernel that wrote the warm input)"
        )
    producer = attrs.get("producer_bytes")
    if producer is None:
        return
    if index is None and attrs.get("warm_l2") is not True:
        raise OpValidationError(
            f"{where} ({op.kind.value}): attrs.producer_bytes: needs warm_l2: true or "
            "warm_input (it describes the kernel that wrote the warm input)"
        )
    warm = op.warm_input_bytes()
    if isinstance(producer, int) and producer < warm:
        raise OpValidationError(
            f"{where} ({op.kind.value}): attrs.producer_bytes: must be at least the {warm} bytes "
            f"of the warm inputs, which the producer wrote (got {producer})"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalOp:
    """One already-partitioned operation on one device.

    Strings are accepted for the enum fields. Construction validates the tensors against the
    kind's shape conventions (see :mod:`opmodel.core.views`) and the attrs against the kind's
    attribute schema; the parsed, typed view is kept in :attr:`view` and the bytes its tensors
    occupy, by role, in :attr:`footprint`. ``derived_cache`` memoises hardware-independent values
    that are pure functions of the op (its FLOPs and compulsory bytes), so repeated predictions
    of one op do not recompute them; it takes no part in equality, hashing or repr.
    """

    name: str
    kind: OpKind
    phase: Phase
    tensors: tuple[TensorSpec, ...]
    attrs: Mapping[str, AttrValue] = field(default_factory=FrozenAttrs)
    view: OpView = field(init=False, repr=False, compare=False)
    footprint: Footprint = field(init=False, repr=False, compare=False)
    derived_cache: dict[object, Any] = field(init=False, repr=False, compare=False)

    def __getstate__(self) -> list[Any]:
        return state_without_cache(self)  # pickled without the memoised derived_cache

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if not isinstance(self.name, str) or not self.name:
            raise OpValidationError(f"LocalOp.name: must be a non-empty string (got {self.name!r})")
        where = f"op '{self.name}'"
        set_(self, "kind", coerce_enum(OpKind, self.kind, f"{where}: kind"))
        set_(self, "phase", coerce_enum(Phase, self.phase, f"{where}: phase"))
        tensors = self.tensors
        if isinstance(tensors, TensorSpec) or not isinstance(tensors, tuple | list) or not tensors:
            raise OpValidationError(
                f"{where}: tensors: must be a non-empty list of TensorSpec (got {tensors!r})"
            )
        for index, tensor in enumerate(tensors):
            if not isinstance(tensor, TensorSpec):
                raise OpValidationError(
                    f"{where}: tensors[{index}]: must be a TensorSpec (got {tensor!r})"
                )
        set_(self, "tensors", tuple(tensors))
        set_(self, "attrs", _checked_attrs(self.kind, self.attrs, where))
        attrs = self.attrs
        if "warm_input" in attrs or "producer_bytes" in attrs or "producer_waves" in attrs:
            _check_warm_attrs(self, where)
        set_(self, "view", build_view(self))
        footprint = footprint_of(self.tensors)
        view = self.view
        if isinstance(view, AttentionView) and view.shared_kv:  # V is stored within K's rows
            footprint = footprint.less_input(view.v.nbytes)
        set_(self, "footprint", footprint)
        set_(self, "derived_cache", {})

    def tensors_with(self, role: TensorRole) -> tuple[TensorSpec, ...]:
        """The op's tensors that have ``role``, in order."""
        return tuple(t for t in self.tensors if t.role is role)

    def warm_input_bytes(self) -> int:
        """Bytes of the inputs the previous kernel wrote (docs/op_files.md): every input with
        attr ``warm_l2``, the one at position ``warm_input`` (checked at construction), else 0."""
        inputs = self.tensors_with(TensorRole.INPUT)
        if self.attrs.get("warm_l2") is True:
            return sum(t.nbytes for t in inputs)
        index = self.attrs.get("warm_input")
        return inputs[index].nbytes if isinstance(index, int) else 0
