"""FLOP counts per op, one formula per function (multiply-add = 2 FLOPs).

Per-element counts of row ops are a documented convention (docs/models/roofline.md); they
count the scalar arithmetic a straightforward kernel issues per element, transcendental
functions (exp, tanh) as one FLOP each.
"""

from __future__ import annotations

__all__ = [
    "ATTENTION_BACKWARD_FLOPS_PER_SCORE",
    "CROSS_ENTROPY_FLOPS_PER_LOGIT",
    "LAYERNORM_FLOPS_PER_ELEMENT",
    "RMSNORM_FLOPS_PER_ELEMENT",
    "ROW_BACKWARD_FLOPS_PER_ELEMENT",
    "SOFTMAX_FLOPS_PER_ELEMENT",
    "attention_backward_matmul_flops",
    "attention_matmul_flops",
    "cross_entropy_flops",
    "elementwise_flops",
    "gemm_flops",
    "layernorm_flops",
    "reduction_flops",
    "rmsnorm_flops",
    "row_backward_flops",
    "softmax_flops",
]

# softmax(x)_j = exp(x_j - max x) / sum exp(x - max x): compare (max), subtract, exp, add (sum),
# multiply by the reciprocal of the sum -> 5 per element.
SOFTMAX_FLOPS_PER_ELEMENT = 5
# cross-entropy over a row of logits, -log softmax(x)_t = log sum exp(x - max x) - (x_t - max x):
# compare (max), subtract, exp, add (sum) and the log-softmax's subtract -> 5 per logit, and 1
# per row for the target's term (the loss's sum or mean).
CROSS_ENTROPY_FLOPS_PER_LOGIT = 5
# layernorm (Ba et al. 2016): sum for the mean, subtract mean, square, sum for the variance,
# multiply by rsqrt(var + eps) -> 5 per element; each affine weight (gamma, beta) adds 1.
LAYERNORM_FLOPS_PER_ELEMENT = 5
# rmsnorm (Zhang & Sennrich 2019): square, sum, multiply by rsqrt(mean + eps) -> 3 per element;
# each weight (gamma) adds 1.
RMSNORM_FLOPS_PER_ELEMENT = 3
# attention backward, per (query, key) score (FlashAttention-2, Dao 2023, Algorithm 2): recompute
# P = exp(scale S - LSE) (scale-and-subtract, exp) and form dS = P (dP - D) (subtract, multiply)
# -> 4 per score; D = rowsum(dO * O) adds 2 per element of O.
ATTENTION_BACKWARD_FLOPS_PER_SCORE = 4
# backward passes of the row ops, per element of x (docs/models/roofline.md), before the weights:
# softmax dx = y (dy - sum(dy y)): multiply, add (the sum), subtract, multiply -> 4;
# layernorm: x_hat = (x - mean) rstd (2), the sums of g and g x_hat with g = dy gamma (3),
# dx = rstd (g - mean(g) - x_hat mean(g x_hat)) (4) -> 9;
# rmsnorm: x_hat = x rstd (1), the sum of g x_hat (2), dx = rstd (g - x_hat mean(g x_hat)) (3) -> 6.
# Each weight read adds 1 (g = dy gamma); dgamma adds 2 (dy x_hat accumulated), dbeta 1.
ROW_BACKWARD_FLOPS_PER_ELEMENT = {"softmax": 4, "layernorm": 9, "rmsnorm": 6}


def gemm_flops(batch: int, m: int, n: int, k: int) -> int:
    """FLOPs of ``C[b,m,n] = A[b,m,k] @ B[b,k,n]``: ``2 * b * m * n * k``."""
    return 2 * batch * m * n * k


def attention_matmul_flops(
    batch_heads: int, score_pairs: int, head_dim_qk: int, head_dim_v: int
) -> int:
    """FLOPs of ``S = Q K^T`` and ``O = P V`` over the unmasked (query, key) pairs.

    ``2 * batch_heads * pairs * head_dim_qk`` for the scores plus
    ``2 * batch_heads * pairs * head_dim_v`` for the output (FlashAttention-2 counts the same
    two GEMMs; masked pairs are skipped by the kernel and not counted).
    """
    return 2 * batch_heads * score_pairs * (head_dim_qk + head_dim_v)


def attention_backward_matmul_flops(
    batch_heads: int, score_pairs: int, head_dim_qk: int, head_dim_v: int
) -> int:
    """FLOPs of the backward pass's five GEMMs over the unmasked (query, key) pairs.

    The scores recomputed (``S = Q K^T``, ``d_qk``), ``dV = P^T dO`` and ``dP = dO V^T`` (``d_v``
    each), ``dQ = dS K`` and ``dK = dS^T Q`` (``d_qk`` each): ``2 * batch_heads * pairs *
    (3 head_dim_qk + 2 head_dim_v)``, 2.5 times the forward's GEMMs when the head dims are
    equal (the count FlashAttention-2 and -3 report backward throughput with).
    """
    return 2 * batch_heads * score_pairs * (3 * head_dim_qk + 2 * head_dim_v)


def row_backward_flops(kind: str, elements: int, weights: int, weight_grads: int) -> int:
    """FLOPs of a row op's backward pass over ``elements`` (``kind``: softmax, layernorm or
    rmsnorm) reading ``weights`` weight vectors and writing ``weight_grads`` weight gradients
    (the first dgamma, a second dbeta): ``ROW_BACKWARD_FLOPS_PER_ELEMENT[kind] + weights +
    2 (dgamma) + 1 (dbeta)`` per element."""
    grads = (2 if weight_grads >= 1 else 0) + (1 if weight_grads >= 2 else 0)
    return (ROW_BACKWARD_FLOPS_PER_ELEMENT[kind] + weights + grads) * elements


def softmax_flops(elements: int) -> int:
    """FLOPs of a softmax over ``elements`` scores: ``5 * elements``."""
    return SOFTMAX_FLOPS_PER_ELEMENT * elements


def cross_entropy_flops(rows: int, vocab: int) -> int:
    """FLOPs of a cross-entropy loss over ``rows`` rows of ``vocab`` logits:
    ``(5 * vocab + 1) * rows``."""
    return (CROSS_ENTROPY_FLOPS_PER_LOGIT * vocab + 1) * rows


def layernorm_flops(elements: int, weights: int) -> int:
    """FLOPs of layernorm over ``elements`` with ``weights`` affine vectors: ``(5 + w) * e``."""
    return (LAYERNORM_FLOPS_PER_ELEMENT + weights) * elements


def rmsnorm_flops(elements: int, weights: int) -> int:
    """FLOPs of rmsnorm over ``elements`` with ``weights`` scale vectors: ``(3 + weights) * e``."""
    return (RMSNORM_FLOPS_PER_ELEMENT + weights) * elements


def elementwise_flops(elements: int, flops_per_element: int) -> int:
    """FLOPs of an elementwise function producing ``elements`` outputs."""
    return flops_per_element * elements


def reduction_flops(input_elements: int) -> int:
    """FLOPs of reducing ``input_elements`` values: one combine per input element."""
    return input_elements
