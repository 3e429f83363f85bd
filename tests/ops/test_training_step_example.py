"""examples/llama3_8b_training_step.py: a Llama-3-8B training step's ops, by part."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import load_example


def test_the_step_s_parts_and_their_sum(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """At TP 8 and DP 16 on H100s: 9 forward ops a layer, 15 backward ones (two GEMMs for each
    of the four projections, the others one, SiLU-and-mul's three), four all-reduces a layer,
    the embedding, its gradient, the head, its two gradients, the loss and its gradient,
    the DP reduce-scatter and all-gather of the rank's parameters across 16 nodes, and the
    optimizer step on its sixteenth; the step is the parts' sum."""
    module = load_example("llama3_8b_training_step")
    parts = module.step_parts(4096, 8, 16)
    assert [sum(n for _, n in ops) for ops in parts.values()] == [288, 480, 128, 7, 2, 2]
    reduce_scatter = parts["data-parallel collectives"][0][0]
    assert reduce_scatter.attrs["ranks_per_node"] == 1 and reduce_scatter.attrs["ranks"] == 16
    per_rank = module.parameters_per_rank(8)
    assert 0.99e9 < per_rank < 1.02e9  # 8.03 billion over 8, the norms whole
    monkeypatch.setattr(sys, "argv", ["x", "--hardware", "h100_sxm", "--tokens", "1024"])
    module.main()
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 7 and lines[-1].startswith("step (serial)")
    times = [float(line.split(" ms")[0].split()[-1]) for line in lines]
    assert times[-1] == pytest.approx(sum(times[:-1]), abs=0.05)


def test_a_config_without_nics_stops_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    module = load_example("llama3_8b_training_step")
    monkeypatch.setattr(sys, "argv", ["x", "--hardware", "a10", "--tokens", "256", "--tp", "2"])
    with pytest.raises(SystemExit, match=r"data-parallel collectives: .* no interconnect\.network"):
        module.main()


def test_bad_arguments_stop_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """An unknown config, or more data-parallel ranks than the rank has parameters."""
    module = load_example("llama3_8b_training_step")
    monkeypatch.setattr(sys, "argv", ["x", "--hardware", "h100"])
    with pytest.raises(SystemExit, match="unknown hardware config 'h100'; did you mean"):
        module.main()
    monkeypatch.setattr(sys, "argv", ["x", "--dp", "100000000000"])
    with pytest.raises(SystemExit, match=r"ops\.optimizer: elements must be a positive integer"):
        module.main()
