"""Host time per kernel by family, and readings of the per-module-call term (``source`` shipped).

Usage: python scripts/host_time_experiment.py [--modules linear|module_calls|not_elementwise|source]
       # about 20 s; writes nothing

EnergAIzer's forward passes are timed with the host launching every kernel (eager Hugging Face
PyTorch). ``opmodel calibrate-energy`` fits a host time per kernel and per ``nn.Module`` call
(:mod:`opmodel.validation.host_time`, the ``source`` reading below, since 2026-12-07; one time
per kernel before). This script prints:

1. each host-bound pass (128 tokens, batch 1 or 2) with its measured time per listed kernel,
   which shows whether the host spends the same per kernel in every family;
2. the held-out pass-time MAPE of that one-gap fit beside a two-term host law: each kernel
   costs ``g`` and each kernel issued by an ``nn.Module`` call costs ``m`` more, both fitted on
   the same training split (a grid, least MAPE). ``--modules`` picks which entries count as a
   module call: ``linear`` (nn.Linear, GPT-2's Conv1D, nn.Conv2d), ``module_calls`` (those and
   nn.LayerNorm and the activation modules ReLU, GELU, SiLU: the default), ``not_elementwise``
   (every entry but the elementwise ones), ``source`` (each language model's module calls per
   pass counted from its transformers 4.51.3 source, ``SOURCE_CALLS``, spread evenly over the
   pass's launches; the vision models as ``module_calls``).

The predicted kernel times are the calibration's (``effective_roofline``, configs without their
calibration at the measured clock, as ``calibrate-energy`` predicts them).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from opmodel.hardware import load_hardware
from opmodel.validation.artifact import WorkloadResult, op_list, predict_runs
from opmodel.validation.artifact_kernels import complete_entries, kernels_from_entry
from opmodel.validation.artifact_ops import entry_parts
from opmodel.validation.artifact_runs import WorkloadRun, load_runs
from opmodel.validation.energy_fit import training_split
from opmodel.validation.host_time import fit_host_time

REPO = Path(__file__).resolve().parents[1]
HARDWARE = ("a10", "a100_40gb_pcie", "h100_sxm")
_ACTIVATIONS = {"relu", "gelu", "silu"}


def _linear(params: dict[str, Any], kind: str) -> bool:
    return (kind == "gemm" and params.get("batch") == 1) or kind == "conv2d"


def _module_call(params: dict[str, Any], kind: str) -> bool:
    activation = kind == "elementwise" and params.get("op") in _ACTIVATIONS
    return _linear(params, kind) or kind == "layernorm" or activation


# nn.Module calls in one eval-mode forward pass of each language model as the artifact builds it
# (transformers 4.51.3, eager attention; containers, embeddings and eval-mode Dropout included):
# BERT-large 1 + 6 embeddings + 1 encoder + 24 x 18 + 3 pooler; GPT-2 1 + 2 + 1 + 12 x 13 + 1;
# OPT-1.3B 4 + 24 x 11 + 1; Qwen2-1.5B 3 + 28 x 13 + 1
SOURCE_CALLS = {"bert": 443, "gpt2": 161, "opt": 269, "qwen2": 368}

MODULES: dict[str, Callable[[dict[str, Any], str], bool]] = {
    "linear": _linear,
    "module_calls": _module_call,
    "not_elementwise": lambda _params, kind: kind != "elementwise",
}


def module_flags(run: WorkloadRun, modules: str) -> list[float]:
    """Module calls charged to each launch slot (an entry the validator predicts): 1 where a
    module call issues it (``--modules``); with ``source``, a language model's module calls
    per pass (``SOURCE_CALLS``) spread evenly over its slots, the vision models as
    ``module_calls``."""
    source = modules == "source"
    is_module = MODULES["module_calls" if source else modules]
    flags: list[float] = []
    for entry in complete_entries(op_list(run), run.family):
        try:
            kernels_from_entry(entry)
        except ValueError:
            continue  # the validator skips it too
        params, tags = entry_parts(entry)
        flags.append(float(is_module(params, tags[0])))
    if source and run.family in SOURCE_CALLS:
        return [SOURCE_CALLS[run.family] / len(flags)] * len(flags)
    return flags


def pass_time_s(latencies: Sequence[float], flags: Sequence[float], g: float, m: float) -> float:
    """The launch queue with host time ``g + m x flag`` per slot."""
    finish = issued = 0.0
    for latency, flag in zip(latencies, flags, strict=True):
        issued += g + m * flag
        finish = max(finish, issued) + latency
    return finish


def _mape(rows: list[tuple[WorkloadResult, list[float]]], g: float, m: float) -> float:
    errors = [abs(pass_time_s(r.op_latencies_s, f, g, m) / r.run.time_s - 1) for r, f in rows]
    return sum(errors) / len(errors)


def two_term_fit(rows: list[tuple[WorkloadResult, list[float]]]) -> tuple[float, float]:
    """``(g, m)`` minimising the rows' MAPE: a coarse 6 % grid, then a 1 % / 2 % one."""
    coarse = [
        (2e-6 * 1.06**i, 0.0 if j < 0 else 1e-6 * 1.1**j) for i in range(58) for j in range(-1, 40)
    ]
    g, m = min(coarse, key=lambda p: _mape(rows, *p))
    fine = [(g * 1.01**a, m * 1.02**b) for a in range(-6, 7) for b in (range(-6, 7) if m else [0])]
    return min(fine, key=lambda p: _mape(rows, *p))


def report(hardware: str, modules: str, runs: list[WorkloadRun]) -> list[str]:
    """The host-bound passes' time per kernel and the two fits' MAPE for one GPU."""
    mine = [r for r in runs if r.hardware == hardware and not r.sweep]

    def bare(name: str, clock_hz: float) -> Any:
        return load_hardware(name).without_calibration().at_clock(clock_hz)

    results = predict_runs(mine, "effective_roofline", spec_of=bare)
    training = training_split(mine)
    rows = [(r, module_flags(r.run, modules)) for r in results]
    lines = [
        f"  {r.run.family:6s} {r.run.workload[:44]:44s} {r.run.time_s / len(f) * 1e6:6.1f} µs"
        for r, f in rows
        if "_s128_" in r.run.workload and ("_b1_" in r.run.workload or "_b2_" in r.run.workload)
    ]
    train = [row for row in rows if row[0].run.workload in training]
    held = [row for row in rows if row[0].run.workload not in training]
    passes = [(r.op_latencies_s, r.run.family, r.run.time_s) for r, _ in train]
    gap = fit_host_time(passes, module_calls=False).launch_gap_s
    g, m = two_term_fit(train)
    lines.append(
        f"  one gap {gap * 1e6:.1f} µs: held out {_mape(held, gap, 0) * 100:.1f} %; "
        f"{g * 1e6:.1f} µs + {m * 1e6:.1f} µs a module call: held out "
        f"{_mape(held, g, m) * 100:.1f} % (training {_mape(train, gap, 0) * 100:.1f} % -> "
        f"{_mape(train, g, m) * 100:.1f} %)"
    )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modules", choices=[*sorted(MODULES), "source"], default="module_calls")
    args = parser.parse_args(argv)
    runs, _ = load_runs(REPO / "data" / "energaizer")
    for hardware in HARDWARE:
        print(f"{hardware}: host-bound passes, measured time per listed kernel")
        print("\n".join(report(hardware, args.modules, runs)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
