"""scripts/persistent_raster_experiment.py: the raster, the round count and the nvjet tile."""

from __future__ import annotations

import csv
from pathlib import Path
from types import ModuleType

import pytest

from tests.scripts.loader import load_script


def _script() -> ModuleType:
    return load_script("persistent_raster_experiment")


def test_swizzle_follows_the_smaller_tile_count() -> None:
    """CUTLASS 3: 8 from 6 tiles on the smaller side, 4 from 3, 2 from 2, else 1."""
    log_swizzle = _script().cutlass_log_swizzle
    assert [log_swizzle(m, 100) for m in (1, 2, 3, 5, 6, 40)] == [0, 1, 2, 2, 3, 3]
    assert log_swizzle(40, 40, max_swizzle=4) == 2


def test_order_walks_down_m_in_stripes_of_n_tiles() -> None:
    """Three M tiles, five N tiles, stripes of 2: (0,0) (0,1) (1,0) (1,1) (2,0) (2,1), then
    the second stripe, then the last, one tile wide (the padded slots are skipped)."""
    order = _script().tile_order(3, 5, 1)
    assert order[:7] == [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1), (0, 2)]
    assert order[-3:] == [(0, 4), (1, 4), (2, 4)]
    assert sorted(order) == [(m, n) for m in range(3) for n in range(5)]


def _row(module: ModuleType, **fields: int) -> object:
    base = {"m": 512, "n": 1024, "k": 100, "tile_m": 128, "tile_n": 256, "grid_ctas": 4}
    base.update(fields)
    return module.PersistentRow(
        folder="f",
        label="l",
        element_bytes=2,
        family="x",
        measured_read_bytes=1.0,
        clock_hz=1.8e9,
        **base,
    )


def test_rounds_read_their_distinct_panels_once() -> None:
    """512 x 1024 with 128 x 256 tiles: 4 x 4 tiles. Stripes of 2 N tiles, rounds of 4 CTAs:
    each round is two M tiles by two N tiles, so it reads 2 A panels of 128 rows and 2 B panels
    of 256 columns over K = 100 in 2 bytes: (256 + 512) x 200 bytes, and there are 4 rounds."""
    module = _script()
    row = _row(module)
    assert module.round_read_bytes(row, 1) == 4 * (2 * 128 + 2 * 256) * 100 * 2
    # rastered along N (stripes of 2 M tiles, N fastest) each round is again 2 x 2 tiles
    assert module.round_read_bytes(row, 1, along_n=True) == 4 * (2 * 128 + 2 * 256) * 100 * 2
    # one round of all 16 tiles reads each operand once
    whole = _row(module, grid_ctas=16)
    assert module.round_read_bytes(whole, 1) == (512 + 1024) * 100 * 2


def test_nvjet_tiles_are_read_in_pytorch_orientation(tmp_path: Path) -> None:
    """``nvjet_sm90_tst_256x128_*`` is cuBLAS's column-major tile: 128 rows of M by 256 of N.
    Rows under 1e11 FLOP or with a second kernel (split-K's reduce) are left out."""
    folder = tmp_path / "run"
    folder.mkdir()
    kernels = [
        ("0", "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", "(2, 66, 1)", "5e8"),
        ("1", "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", "(2, 66, 1)", "1e6"),
        ("2", "nvjet_sm90_tst_64x8_64x16_2x1_v_bz_splitK_NNT", "(2, 64, 1)", "1e6"),
        ("2", "splitKreduce_kernel", "(128, 1, 1)", "1e5"),
    ]
    with (folder / "ncu_kernels.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        columns = ["index", "kernel", "grid", "dram__bytes_read.sum"]
        writer.writerow([*columns, "sm__cycles_elapsed.avg.per_second"])
        writer.writerows([(*k, "1.8e9") for k in kernels])
    labels = [
        ("0", "gemm bf16 m=2048 n=8192 k=4096 NN"),
        ("1", "gemm bf16 m=16 n=256 k=256 NN"),
        ("2", "gemm bf16 m=4096 n=4096 k=8192 NN"),
    ]
    with (folder / "ncu_labels.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["index", "label"])
        writer.writerows(labels)
    rows = _script().load_rows(tmp_path)
    assert [(r.label, r.tile_m, r.tile_n, r.grid_ctas) for r in rows] == [
        ("gemm bf16 m=2048 n=8192 k=4096 NN", 128, 256, 132)
    ]


def test_a_folder_without_large_nvjet_gemms_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="no large nvjet GEMM"):
        _script().load_rows(tmp_path)


def test_a_csv_without_a_needed_column_is_a_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "ncu_kernels.csv").write_text("index,kernel\n0,k\n")
    with pytest.raises(Exception, match=r"missing columns grid, dram__bytes_read\.sum"):
        _script().load_rows(tmp_path)
