"""TensorSpec and LocalOp construction: conversion, derived sizes and exact error messages."""

from __future__ import annotations

import pytest

from opmodel import (
    DType,
    LocalOp,
    TensorRole,
    TensorSpec,
)

from ..conftest import gemm

BF16 = DType.BF16


def test_strings_become_enums_and_sizes_are_derived() -> None:
    t = TensorSpec("weight", [3, 5], "int4")
    assert t.role is TensorRole.WEIGHT and t.dtype is DType.INT4
    assert t.shape == (3, 5)
    assert t.num_elements == 15
    assert t.nbytes == 8  # ceil(15 * 4 bits / 8) = ceil(7.5)


def test_enums_compare_and_hash_as_strings() -> None:
    assert DType.BF16 == "bf16"
    assert {DType.BF16: 1}["bf16"] == 1
    assert DType.FP8_E4M3.family is DType.FP8
    assert DType.TF32.bits == 32


def test_gemm_view_and_footprint() -> None:
    op = gemm(64, 32, 16)
    view = op.view
    assert (view.batch, view.m, view.n, view.k) == (1, 64, 32, 16)
    # footprint: A 64*16*2 = 2048 B, B 16*32*2 = 1024 B, C 64*32*2 = 4096 B
    assert op.footprint.input_bytes == 2048
    assert op.footprint.weight_bytes == 1024
    assert op.footprint.output_bytes == 4096
    assert op.footprint.total_bytes == 7168


def test_attrs_are_immutable_and_ops_hash() -> None:
    op = gemm(8, 8, 8, transpose_a=False)
    with pytest.raises(TypeError):
        op.attrs["transpose_a"] = True  # type: ignore[index]
    assert op == gemm(8, 8, 8, transpose_a=False)
    assert hash(op) == hash(gemm(8, 8, 8, transpose_a=False))


def test_frozen_attrs_are_shared_and_dicts_are_frozen() -> None:
    """An op built from another op's (immutable) attrs shares them, so a sweep over shapes
    hashes its kernel attrs once; a plain dict is copied into a FrozenAttrs."""
    first = gemm(64, 64, 64, cta_tile_m=64)
    again = LocalOp(
        name="again", kind=first.kind, phase=first.phase, tensors=first.tensors, attrs=first.attrs
    )
    assert again.attrs is first.attrs
    raw = {"cta_tile_m": 64}
    copied = LocalOp(
        name="copied", kind=first.kind, phase=first.phase, tensors=first.tensors, attrs=raw
    )
    assert copied.attrs == raw and copied.attrs is not raw
    raw["cta_tile_m"] = 128  # the caller's dict changing later does not reach the op
    assert copied.attrs["cta_tile_m"] == 64


def test_transposed_operands() -> None:
    op = LocalOp(
        name="t",
        kind="gemm",
        phase="train_bwd",
        tensors=(
            TensorSpec("input", (16, 64), BF16),  # A stored [k, m]
            TensorSpec("weight", (32, 16), BF16),  # B stored [n, k]
            TensorSpec("output", (64, 32), BF16),
        ),
        attrs={"transpose_a": True, "transpose_b": True},
    )
    assert (op.view.m, op.view.n, op.view.k) == (64, 32, 16)
