"""A measurement grid of the tensor-core GEMMs of EnergAIzer forward passes, for a locked clock.

Usage: python scripts/energaizer_gemm_grid.py [--workload-dir data/energaizer/workloads/all]
       [--workload NAME ...] [--output FILE]

``opmodel validate-artifact`` puts the A100 PCIe's and the H100 SXM's remaining pass-time error
on their GEMM kernels: fitted per pass, they run 1.26-1.42x longer than predicted at every
locked clock (``scripts/artifact_error_by_kind.py``; docs/validation.md, "Forward passes: where
the time error is"), while the same GEMM model is within a few per cent of clock-locked GEMMs
elsewhere (Rapid-LLM's A100 rows at 1.04 GHz, this project's H200 GEMMs at the clock Nsight
Compute saw). This script writes the grid that tells the two apart on a leased GPU: every
distinct bf16 tensor-core GEMM and batched GEMM of the named passes, as PyTorch ran it, timed
by ``opmodel measure`` with kernel-scope times at a locked SM clock
(``--lock-sm-clock-mhz``, scripts/measure_h200_lease.sh's ``LOCK_MHZ``), then compared with
``opmodel validate-gemm-latency --data-dir``. The grid meters energy: its loop is what records
each case's SM clock under load (``clock_mhz``), at which the validator predicts the row, and
which shows whether a locked clock held.

How an op-list entry becomes a case (the lists record cuBLAS's column-major dimensions):

- a linear layer (``batch`` 1) of BERT, OPT or Qwen2: ``dimM`` output features, ``dimN``
  tokens, ``dimK`` input features. ``F.linear(x, W)`` is ``x [tokens, in] @ W[out, in]^T``:
  ``m`` = tokens, ``n`` = outputs, ``k`` = inputs, trans ``NT`` (B stored ``[n, k]``);
- GPT-2's layers are Hugging Face ``Conv1D`` modules, ``addmm(bias, x, W)`` with ``W [in,
  out]``, and its lists give ``dimM`` tokens, ``dimN`` outputs: ``m = dimM``, ``n = dimN``,
  trans ``NN``;
- eager attention's scores (``batch`` > 1, ``dimM = dimN > dimK``): ``Q @ K^T``, ``NT``;
- its context (``batch`` > 1 otherwise): ``P @ V``, ``NN``.

Only ``['gemm', 'tc', ...]`` entries in bf16 count (the fp32 CUDA-core products of rotary
embeddings are microseconds). The default passes are GPU-bound ones that the A100 PCIe and the
H100 SXM sets both measured (BERT-large, GPT-2, OPT-1.3B, Qwen2-1.5B). The header of the grid
lists how often each pass runs each case, so the passes' GEMM time can be summed from the
measured rows. The shipped ``configs/measure/energaizer_gemms.yaml`` is this script's output
with the defaults (tests/scripts/test_energaizer_gemm_grid.py checks that they agree).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opmodel.configs import MEASURE_DIR
from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind
from opmodel.core.errors import ConfigError
from opmodel.measure.plan import Case
from opmodel.validation.artifact_ops import entry_parts, positive_int

ROOT = Path(__file__).resolve().parent.parent
WORKLOAD_DIR = ROOT / "data" / "energaizer" / "workloads" / "all"
SHIPPED = MEASURE_DIR / "energaizer_gemms.yaml"
DEFAULT_WORKLOADS = (
    "bertmodel_large_pbf16_b32_s256_modeprefill",
    "gpt2model_gpt2_pbf16_b16_s1024_modeprefill",
    "optmodel_opt-1p3b_pbf16_b8_s1024_modeprefill",
    "qwen2model_qwen2-1p5b_pbf16_b4_s2048_modeprefill",
)


@dataclass(frozen=True, slots=True, order=True)
class GemmCase:
    """One GEMM as ``opmodel measure`` runs it (row-major sizes and transposes)."""

    batch: int  # 1: a plain GEMM
    m: int
    n: int
    k: int
    trans: str

    def grid_line(self) -> str:
        """The case as one flow-style entry of a grid's ``ops`` list."""
        if self.batch == 1:
            sizes = f"m: [{self.m}], n: [{self.n}], k: [{self.k}]"
            kind = "gemm"
        else:
            sizes = f"batch: [{self.batch}], m: [{self.m}], n: [{self.n}], k: [{self.k}]"
            kind = "batched_gemm"
        return f"  - {{kind: {kind}, sizes: {{{sizes}}}, dtypes: [bf16], trans: [{self.trans}]}}"

    @property
    def label(self) -> str:
        """The label ``opmodel measure`` gives the case (its plan's :class:`Case`)."""
        sizes = (("m", self.m), ("n", self.n), ("k", self.k))
        if self.batch == 1:
            return Case(kind=OpKind.GEMM, dtype=DType.BF16, sizes=sizes, trans=self.trans).label
        batched = (("batch", self.batch), *sizes)
        return Case(
            kind=OpKind.BATCHED_GEMM, dtype=DType.BF16, sizes=batched, trans=self.trans
        ).label


def gemm_case(entry: object, *, conv1d: bool = False) -> GemmCase | None:
    """The case of a bf16 tensor-core GEMM entry (module docstring; ``conv1d``: GPT-2's
    layers), None for any other entry; ValueError for an entry that is not ``[params, tags]``
    or a GEMM without its sizes."""
    params, tags = entry_parts(entry)
    if tags[0] != "gemm" or len(tags) < 2 or tags[1] != "tc" or params.get("precM") != "bf16":
        return None
    batch, m, n, k = (positive_int(params, key) for key in ("batch", "dimM", "dimN", "dimK"))
    if batch == 1:
        if conv1d:
            return GemmCase(batch=1, m=m, n=n, k=k, trans="NN")
        return GemmCase(batch=1, m=n, n=m, k=k, trans="NT")
    return GemmCase(batch=batch, m=m, n=n, k=k, trans="NT" if m == n > k else "NN")


def workload_cases(path: Path) -> Counter[GemmCase]:
    """How often one pass (an op-list file) runs each case; ConfigError naming the file and the
    entry for an unreadable list. A file named ``gpt2model_*`` is GPT-2 (``Conv1D`` layers)."""
    conv1d = path.name.startswith("gpt2model_")
    try:
        entries: Any = json.loads(path.read_text())
    except OSError as exc:
        raise ConfigError([f"{path}: {exc.strerror or exc}"]) from None
    except json.JSONDecodeError as exc:
        raise ConfigError([f"{path}: not JSON ({exc.msg}, line {exc.lineno})"]) from None
    if not isinstance(entries, list):
        raise ConfigError([f"{path}: expected a list of [params, tags] entries"])
    counts: Counter[GemmCase] = Counter()
    for index, entry in enumerate(entries):
        try:
            case = gemm_case(entry, conv1d=conv1d)
        except ValueError as exc:
            raise ConfigError([f"{path}: entry {index}: {exc}"]) from None
        if case is not None:
            counts[case] += 1
    return counts


def grid_text(per_workload: dict[str, Counter[GemmCase]]) -> str:
    """The grid YAML: a header naming the passes and each case's count per pass, then the
    timing settings and one entry per distinct case (sorted)."""
    cases = sorted(set().union(*per_workload.values()))
    names = list(per_workload)
    lines = [
        "# Written by `python scripts/energaizer_gemm_grid.py` (do not edit by hand): every",
        "# distinct bf16 tensor-core GEMM of these EnergAIzer forward passes, as PyTorch ran it,",
        "# for kernel-scope times at a locked SM clock (docs/measure.md, docs/validation.md",
        '# "Forward passes: where the time error is"). Passes (p1, p2, ...):',
        *(f"#   p{i}: {name}" for i, name in enumerate(names, 1)),
        "# Runs per pass of each case:",
        *(
            f"#   {case.label}: "
            + ", ".join(
                f"p{i} x{per_workload[name][case]}"
                for i, name in enumerate(names, 1)
                if per_workload[name][case]
            )
            for case in cases
        ),
        "name: energaizer_gemms",
        f"description: the bf16 GEMMs of {len(names)} EnergAIzer forward pass"
        f"{'es' if len(names) > 1 else ''}; kernel-scope times",
        "warmup: 5",
        "repeats: 10",
        "flush_l2: true",
        "energy: true  # the NVML loop also reads the SM clock under load: clock_mhz",
        "energy_loop_s: 0.2",
        "kernel_timing: true",
        "ops:",
        *(case.grid_line() for case in cases),
    ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workload-dir", type=Path, default=WORKLOAD_DIR)
    parser.add_argument(
        "--workload",
        action="append",
        help="an op list's name without .json (repeatable; default: four GPU-bound passes)",
    )
    parser.add_argument("--output", type=Path, help="write the grid here (default: stdout)")
    args = parser.parse_args(argv)
    names = args.workload or list(DEFAULT_WORKLOADS)
    per_workload = {name: workload_cases(args.workload_dir / f"{name}.json") for name in names}
    empty = [name for name, counts in per_workload.items() if not counts]
    if empty:
        raise ConfigError(
            [f"{args.workload_dir / (name + '.json')}: no bf16 tensor-core GEMM" for name in empty]
        )
    text = grid_text(per_workload)
    if args.output:
        args.output.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("energaizer_gemm_grid", main)
