"""Constructors of the ops of every kind, by their sizes: ``ops.gemm(4096, 1024, 8192)``.

Each returns the :class:`~opmodel.LocalOp` of the kind's conventions (README, "Conventions of
the op kinds"), equal to the op written out tensor by tensor, so a simulator that lowers a
model can name sizes instead of shapes and roles. Sizes are positive integers (numpy's too),
dtypes a :class:`~opmodel.DType` or its name (default bf16); every constructor takes ``name``
(default: the kind, or the elementwise function), ``phase`` and further op attrs as keyword
arguments, checked as any op's are. Bad sizes are one-line :class:`~opmodel.OpValidationError`
naming the constructor and the argument.
"""

from opmodel.ops.attention import attention_decode, attention_prefill
from opmodel.ops.communication import collective
from opmodel.ops.loss import cross_entropy
from opmodel.ops.matmul import batched_gemm, gemm, grouped_gemm, grouped_gemm_wgrad
from opmodel.ops.training import optimizer
from opmodel.ops.vector import (
    copy,
    elementwise,
    embedding,
    layernorm,
    reduction,
    rmsnorm,
    rope,
    softmax,
)

__all__ = [
    "attention_decode",
    "attention_prefill",
    "batched_gemm",
    "collective",
    "copy",
    "cross_entropy",
    "elementwise",
    "embedding",
    "gemm",
    "grouped_gemm",
    "grouped_gemm_wgrad",
    "layernorm",
    "optimizer",
    "reduction",
    "rmsnorm",
    "rope",
    "softmax",
]
