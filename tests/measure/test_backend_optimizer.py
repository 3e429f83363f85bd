"""TorchBackend's optimizer cases against fake torch and torch.optim modules."""

from __future__ import annotations

import itertools
from pathlib import Path

from opmodel.measure import TorchBackend, expand, load_grid
from tests.measure.fake_optim import with_fake_optim
from tests.measure.fakes import FakeNVML, FakeTorch


def test_optimizer_cases_run_torch_optim_steps(tmp_path: Path) -> None:
    """An optimizer case builds ``tensors`` parameters with gradients (sizes differing by one
    at most), steps once to create the states, then times ``step``: fused or foreach."""
    path = tmp_path / "grid.yaml"
    path.write_text(
        "name: g\nops:\n  - kind: optimizer\n    sizes: {elements: [10], tensors: [3]}\n"
        "    functions: [adamw/fused, sgd_momentum/foreach]\n"
    )
    torch = with_fake_optim(FakeTorch(itertools.repeat(1.0)))
    backend = TorchBackend(torch=torch, nvml=FakeNVML(torch, mj_per_launch=1.0, allow_lock=True))
    cases = expand(load_grid(path))
    logged = []
    for case in cases:
        torch.kernels.clear()
        run = backend.kernel(case)
        run()
        logged.append(torch.kernels[-1])
        assert len(torch.kernels) == 2  # the untimed first step, then the timed one
    assert logged == [
        ("AdamW.step", ((4,), (3,), (3,)), {"lr": 1e-3, "fused": True}),
        ("SGD.step", ((4,), (3,), (3,)), {"lr": 1e-3, "momentum": 0.9, "foreach": True}),
    ]
    op = cases[0].op()
    assert (op.attrs["algorithm"], op.attrs["tensors"], op.phase.value) == ("adamw", 3, "train_bwd")
