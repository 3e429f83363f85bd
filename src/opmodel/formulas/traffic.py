"""Compulsory global-memory traffic: each byte an op must read or write at least once."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from opmodel.core.enums import TensorRole

if TYPE_CHECKING:
    from opmodel.core.op import TensorSpec

__all__ = ["compulsory_read_bytes", "compulsory_write_bytes", "gather_read_bytes"]

_READ_ROLES = (TensorRole.INPUT, TensorRole.WEIGHT, TensorRole.GRAD)


def compulsory_read_bytes(tensors: Iterable[TensorSpec]) -> int:
    """Bytes of every INPUT, WEIGHT and GRAD tensor, each read once."""
    return sum(t.nbytes for t in tensors if t.role in _READ_ROLES)


def compulsory_write_bytes(tensors: Iterable[TensorSpec]) -> int:
    """Bytes of every OUTPUT tensor, each written once."""
    return sum(t.nbytes for t in tensors if t.role is TensorRole.OUTPUT)


def gather_read_bytes(tokens: int, vocab: int, row_bytes: int) -> int:
    """Table bytes an embedding gather must read: ``min(tokens, vocab)`` distinct rows.

    Repeated indices may hit in cache, so only distinct rows are compulsory; at most the whole
    table (``vocab`` rows) is read.
    """
    return min(tokens, vocab) * row_bytes
