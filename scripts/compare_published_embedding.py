"""Liger-Kernel's published nn.Embedding forward-and-backward times against effective_roofline's
embedding backward pass; nothing fitted.

Usage: python scripts/compare_published_embedding.py [--data FILE] [--rows]

Data: data/blocks/liger_embedding.csv (``python scripts/convert_liger_embedding.py``;
data/blocks/SOURCE.md): on an A100-SXM4-80GB (Liger 0.2.1, clocks not locked), 16,384 int64
indices into fp32 tables of 1,024-131,072 rows of 768 or 4,096, timed by Triton's ``do_bench``
(CUDA events around each call, a 256 MiB L2 flush before it): the forward gather alone
(``forward``), and ``full``: the forward, ``torch.randn_like`` of its output for dy, and
``output.backward(dy)``. No gradient is reset between calls, so the table's new gradient is
added in place to the one ``.grad`` holds (autograd's AccumulateGrad).

A ``full`` row is predicted as the sum of its kernels: the forward (``index_select``, after the
flush's dirty lines), the ``randn_like`` (a stream of stores the size of the output, ATen's fill
structure: Philox's arithmetic is not priced, so a low estimate), the embedding's backward op
(``opmodel.backward_of``: ATen's ``embedding_dense_backward``, docs/models/streaming.md,
"Embedding backward") and the accumulation (an elementwise ``add`` of two tables into one). The
backward part, published ``full`` minus published ``forward``, is compared with the sum of the
last three. The event scope's host work (autograd's, and the Python calls') is not added.
"""

from __future__ import annotations

import argparse
import csv
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ratio_summary import print_ratio_groups

from opmodel import backward_of, ops
from opmodel.core.dtypes import DType
from opmodel.core.errors import OpModelError
from opmodel.hardware import load_hardware
from opmodel.hardware.clocking import boosted
from opmodel.hardware.spec import HardwareSpec
from opmodel.models import get_model
from opmodel.models.effective_roofline.embedding_backward_op import (
    EmbeddingBackwardEvaluation,
    zero_fill,
)

DATA = Path(__file__).resolve().parent.parent / "data" / "blocks" / "liger_embedding.csv"
FLUSH_BYTES = 256 * 1024 * 1024  # do_bench's L2 flush: a 256 MiB zero_() before each call
MODEL = "effective_roofline"


@dataclass(frozen=True, slots=True)
class Pair:
    """One size's published forward and full times (seconds)."""

    hardware: str
    tokens: int
    vocab: int
    hidden: int
    dtype: str
    forward_s: float
    full_s: float

    @property
    def label(self) -> str:
        """``M<tokens> N<hidden> V<vocab>``."""
        return f"M{self.tokens} N{self.hidden} V{self.vocab}"


@dataclass(frozen=True, slots=True)
class Compared:
    """A pair and the model's seconds: the forward, ``randn_like``, the backward op (its
    evaluation) and the accumulation."""

    pair: Pair
    forward_s: float
    randn_s: float
    backward_s: float
    accumulate_s: float
    backward: EmbeddingBackwardEvaluation
    roofline_s: float  # the roofline's backward op and accumulation, with the same randn_like

    @property
    def full_ratio(self) -> float:
        """Predicted over published, the whole call."""
        model = self.forward_s + self.randn_s + self.backward_s + self.accumulate_s
        return model / self.pair.full_s

    @property
    def backward_model_s(self) -> float:
        """The predicted backward part: randn_like, the backward op, the accumulation."""
        return self.randn_s + self.backward_s + self.accumulate_s

    @property
    def backward_ratio(self) -> float:
        """Predicted over published backward part (full minus forward)."""
        return self.backward_model_s / (self.pair.full_s - self.pair.forward_s)

    @property
    def roofline_ratio(self) -> float:
        """The roofline's backward part over the published one."""
        return self.roofline_s / (self.pair.full_s - self.pair.forward_s)


def load_pairs(path: Path = DATA) -> list[Pair]:
    """Every size with both a forward and a full row; a bad value or a size with one of the two
    is a one-line error naming the file."""
    times: dict[tuple[str, int, int, int, str], dict[str, float]] = {}
    with path.open(newline="") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            where = f"{path}: line {line}"
            mode = row.get("mode")
            if mode not in ("forward", "full"):
                raise OpModelError(f"{where}: mode must be forward or full (got {mode!r})")
            try:
                key = (row["hardware"], int(row["tokens"]), int(row["vocab"]),
                       int(row["hidden"]), row["dtype"])  # fmt: skip
                time_s = float(row["time_ms"]) * 1e-3
            except (KeyError, TypeError, ValueError) as exc:
                msg = f"{where}: tokens, vocab, hidden, dtype, time_ms: {exc}"
                raise OpModelError(msg) from None
            if min(key[1], key[2], key[3]) < 1 or not time_s > 0:
                raise OpModelError(f"{where}: sizes and time_ms must be positive")
            times.setdefault(key, {})[str(mode)] = time_s
    pairs = []
    for key, modes in sorted(times.items()):
        if set(modes) != {"forward", "full"}:
            msg = f"{path}: {key}: needs a forward and a full row (got {sorted(modes)})"
            raise OpModelError(msg)
        pairs.append(Pair(*key, forward_s=modes["forward"], full_s=modes["full"]))
    return pairs


def compare_pair(pair: Pair, spec: HardwareSpec) -> Compared:
    """``pair``'s kernels under effective_roofline on ``spec`` (module docstring)."""
    model = get_model(MODEL)
    n, v, h, d = pair.tokens, pair.vocab, pair.hidden, pair.dtype
    flushed = ops.embedding(n, v, h, d, phase="train_fwd", implementation="pytorch",
                            l2_dirty_bytes=FLUSH_BYTES)  # fmt: skip
    backward = backward_of(ops.embedding(n, v, h, d, phase="train_fwd", implementation="pytorch"))
    accumulate = ops.elementwise("add", (v, h), d, phase="train_bwd", implementation="pytorch")
    bwd = model.predict(backward, spec)
    assert isinstance(bwd.diagnostics, EmbeddingBackwardEvaluation)
    randn_s = zero_fill(n * h, DType(d), boosted(spec)).latency_s
    roofline = get_model("roofline")
    roofline_s = sum(roofline.predict(op, spec).latency_s for op in (backward, accumulate))
    return Compared(
        pair,
        model.predict(flushed, spec).latency_s,
        randn_s,
        bwd.latency_s,
        model.predict(accumulate, spec).latency_s,
        bwd.diagnostics,
        randn_s + roofline_s,
    )


def compare(pairs: Sequence[Pair]) -> list[Compared]:
    """Every pair on its shipped config."""
    specs = {name: load_hardware(name) for name in sorted({p.hardware for p in pairs})}
    return [compare_pair(p, specs[p.hardware]) for p in pairs]


def _print(rows: Sequence[Compared], every_row: bool) -> None:
    if every_row:
        columns = ("full ms", "model", "ratio", "bwd part", "model", "ratio", "op ms", "fill",
                   "sums", "scatter")  # fmt: skip
        print(f"{'size':<22} " + " ".join(f"{c:>8}" for c in columns))
        for r in rows:
            b, p = r.backward, r.pair
            sums = b.partial_sums.latency_s if b.partial_sums else 0.0
            scatter = b.scatter.latency_s if b.scatter else 0.0
            ms = (p.full_s, r.full_ratio * p.full_s)
            part = (p.full_s - p.forward_s, r.backward_model_s)
            ops_ms = (r.backward_s, b.fill.latency_s, sums, scatter)
            cells = (
                *(f"{t * 1e3:8.3f}" for t in ms), f"{r.full_ratio:7.2f}x",
                *(f"{t * 1e3:8.3f}" for t in part), f"{r.backward_ratio:7.2f}x",
                *(f"{t * 1e3:8.3f}" for t in ops_ms),
            )  # fmt: skip
            print(f"{p.label:<22} " + " ".join(cells))
    groups: dict[str, list[float]] = {}
    for r in rows:
        where = f"{r.pair.hardware} hidden {r.pair.hidden}"
        groups.setdefault(f"{where}: full", []).append(r.full_ratio)
        groups.setdefault(f"{where}: backward part", []).append(r.backward_ratio)
    groups["all: full"] = [r.full_ratio for r in rows]
    groups["all: backward part"] = [r.backward_ratio for r in rows]
    groups["all: backward part, roofline"] = [r.roofline_ratio for r in rows]
    print_ratio_groups(groups, 40)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the published rows' CSV")
    parser.add_argument("--rows", action="store_true", help="print every size")
    args = parser.parse_args(argv)
    print("Liger-Kernel's nn.Embedding, forward then backward (do_bench), A100-SXM4-80GB, fp32;")
    print("predicted: forward + randn_like + the backward op + the gradient's accumulation")
    _print(compare(load_pairs(args.data)), args.rows)
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("compare_published_embedding", main)
