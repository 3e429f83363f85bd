"""scripts/convert_liger_embedding.py and compare_published_embedding.py: Liger's published
nn.Embedding forward and forward-and-backward rows, their checks and the converter."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel import OpModelError
from tests.scripts.loader import load_script

ROOT = Path(__file__).resolve().parents[2]
HEADER = "label,hardware,mode,provider,tokens,vocab,hidden,dtype,time_ms,liger_version\n"


def _write(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "rows.csv"
    path.write_text(HEADER + "".join(f"{r}\n" for r in rows))
    return path


def test_pairs_need_both_modes_and_valid_values(tmp_path: Path) -> None:
    script = load_script("compare_published_embedding")
    ok = "x,a100_80gb_sxm,forward,huggingface,16384,1024,768,fp32,0.1,0.2.1"
    full = "x,a100_80gb_sxm,full,huggingface,16384,1024,768,fp32,0.4,0.2.1"
    (pair,) = script.load_pairs(_write(tmp_path, ok, full))
    assert (pair.forward_s, pair.full_s) == pytest.approx((1e-4, 4e-4))
    with pytest.raises(OpModelError, match="needs a forward and a full row"):
        script.load_pairs(_write(tmp_path, ok))
    with pytest.raises(OpModelError, match="line 2: mode must be forward or full"):
        script.load_pairs(_write(tmp_path, ok.replace("forward", "backward"), full))
    with pytest.raises(OpModelError, match="line 3: tokens, vocab, hidden, dtype, time_ms"):
        script.load_pairs(_write(tmp_path, ok, full.replace("0.4", "fast")))
    with pytest.raises(OpModelError, match="line 2: sizes and time_ms must be positive"):
        script.load_pairs(_write(tmp_path, ok.replace(",0.1,", ",0,"), full))


def test_the_converter_keeps_atens_rows_and_reproduces_the_shipped_file(tmp_path: Path) -> None:
    """huggingface's forward and full speed rows on the A100; Liger's atomic kernel, Inductor's,
    the memory metric and other GPUs left out."""
    convert = load_script("convert_liger_embedding")
    record = {
        "kernel_name": "embedding", "kernel_provider": "huggingface",
        "kernel_operation_mode": "full", "metric_name": "speed", "x_value": "4096",
        "y_value_50": "1.5", "extra_benchmark_config_str":
        '{"B": 8, "T": 2048, "D": 4096, "dtype": "torch.float32"}',
        "gpu_name": "NVIDIA A100-SXM4-80GB", "liger_version": "0.2.1",
    }  # fmt: skip
    row = convert.embedding_row(record)
    assert row is not None
    assert row["label"] == "embedding:huggingface:full:a100_80gb_sxm:M16384:N4096:V4096"
    assert (row["tokens"], row["vocab"], row["hidden"], row["dtype"]) == (16384, 4096, 4096, "fp32")
    for field, value in (("kernel_provider", "liger"), ("kernel_provider", "torch_compile"),
                         ("metric_name", "memory"), ("kernel_operation_mode", "backward"),
                         ("gpu_name", "NVIDIA H100 80GB HBM3")):  # fmt: skip
        assert convert.embedding_row({**record, field: value}) is None
    shared = ROOT.parent / "shared" / "data"
    if not (shared / convert.TABLE).exists():
        pytest.skip("../shared/data is not on this machine")
    convert.convert(shared, tmp_path)
    shipped = ROOT / "data/blocks/liger_embedding.csv"
    assert (tmp_path / "liger_embedding.csv").read_text() == shipped.read_text()
