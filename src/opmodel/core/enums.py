"""String-valued vocabularies: op kinds, phases, tensor roles, engines and bounds."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["GEMM_KINDS", "Bound", "Engine", "OpKind", "Phase", "StrValueEnum", "TensorRole"]


class StrValueEnum(StrEnum):
    """A StrEnum that hashes like its string value.

    ``Enum.__hash__`` hashes the member *name* in Python code; since a StrEnum member equals its
    value (``DType.BF16 == "bf16"``), hashing the value keeps hash and equality consistent (a
    dict keyed by members also finds plain strings) and runs at C speed in hot lookups.
    """

    __hash__ = str.__hash__


class OpKind(StrValueEnum):
    """The kind of a local operation."""

    GEMM = "gemm"
    BATCHED_GEMM = "batched_gemm"
    GROUPED_GEMM = "grouped_gemm"
    ATTENTION_PREFILL = "attention_prefill"
    ATTENTION_DECODE = "attention_decode"
    SOFTMAX = "softmax"
    LAYERNORM = "layernorm"
    RMSNORM = "rmsnorm"
    ELEMENTWISE = "elementwise"
    REDUCTION = "reduction"
    EMBEDDING = "embedding"
    COPY = "copy"
    CROSS_ENTROPY = "cross_entropy"
    COLLECTIVE = "collective"
    OPTIMIZER = "optimizer"


GEMM_KINDS = frozenset({OpKind.GEMM, OpKind.BATCHED_GEMM, OpKind.GROUPED_GEMM})
"""The kinds the GEMM machinery (:mod:`opmodel.models.gemm`) models."""


class Phase(StrValueEnum):
    """Where in training or inference the op runs (informational; models may use it)."""

    TRAIN_FWD = "train_fwd"
    TRAIN_BWD = "train_bwd"
    PREFILL = "prefill"
    DECODE = "decode"
    INFERENCE = "inference"


class TensorRole(StrValueEnum):
    """What a tensor is to its op.

    Traffic convention: OUTPUT tensors are written; INPUT, WEIGHT and GRAD tensors are read;
    WORKSPACE is scratch that counts in the footprint but not in compulsory traffic.
    """

    INPUT = "input"
    WEIGHT = "weight"
    OUTPUT = "output"
    GRAD = "grad"
    WORKSPACE = "workspace"


class Engine(StrValueEnum):
    """The execution engine that does an op's arithmetic."""

    TENSOR = "tensor"
    VECTOR = "vector"
    MEMORY = "memory"
    INTERCONNECT = "interconnect"  # a collective: the links between devices move its bytes


class Bound(StrValueEnum):
    """The resource that limits a roofline-style estimate."""

    TENSOR = "tensor"
    VECTOR = "vector"
    MEMORY = "memory"
    INTERCONNECT = "interconnect"
