"""The kernel catalogue files: shipped ones load; bad ones give one line per problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel import ConfigError
from opmodel.hardware.kernel_catalogue import (
    Instruction,
    catalogue_architectures,
    catalogue_for,
    load_catalogue_file,
)

GOOD = """
architectures: [smx]
families:
  - name: f
    instruction: mma_sync
    dtypes: [bf16]
    split_k: [1, 2]
    tiles:
      - {cta: [128, 128, 32], warp: [64, 64, 32], stages: 3}
"""


def test_shipped_catalogues_cover_the_shipped_gpus() -> None:
    assert {"sm80", "sm86", "sm89", "sm90", "generic"} <= set(catalogue_architectures())
    sm90 = catalogue_for("sm90")
    assert sm90 is not None
    assert any(t.instruction is Instruction.WGMMA for t in sm90)
    assert any(t.instruction is Instruction.MMA_SYNC for t in sm90)  # sm80 included
    assert catalogue_for("sm75") is None


def test_templates_expand_split_k(tmp_path: Path) -> None:
    (tmp_path / "smx.yaml").write_text(GOOD)
    templates = catalogue_for("smx", tmp_path)
    assert templates is not None
    assert [t.name for t in templates] == [
        "smx_f_128x128x32_3stage",
        "smx_f_128x128x32_3stage_splitk2",
    ]
    assert templates[0].warps_per_cta == 4
    assert templates[0].min_mn_if_mn_major == 0  # default: the family serves every size
    sm90 = catalogue_for("sm90")
    assert sm90 is not None
    tf32 = [t for t in sm90 if t.instruction is Instruction.WGMMA and "wgmma_tf32" in t.name]
    assert tf32 and all(t.min_mn_if_mn_major == 1024 for t in tf32)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (GOOD.replace("mma_sync", "mma_synk"), "families[0].instruction: must be one of"),
        (
            GOOD.replace("stages: 3", "stage: 3"),
            "families[0].tiles[0].stage: unknown key; did you mean 'stages'?",
        ),
        (GOOD.replace("[64, 64, 32]", "[48, 64, 32]"), "is not a multiple of warp tile"),
        (GOOD.replace("[1, 2]", "[0, 2]"), "families[0].split_k[0]: must be > 0 (got 0)"),
        (GOOD.replace("bf16", "bf17"), "families[0].dtypes[0]: must be one of"),
        (GOOD.replace("stages: 3}", "stages: 3, cluster: [2, 1]}"), "clusters need instruction"),
        (
            GOOD.replace("split_k: [1, 2]", "split_k: [1, 2]\n    min_mn_if_mn_major: -1"),
            "families[0].min_mn_if_mn_major: must be >= 0 (got -1)",
        ),
    ],
)
def test_bad_catalogue_is_reported_with_file_and_path(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_catalogue_file(path)
    assert str(info.value).startswith(f"{path}: ")
    assert message in str(info.value)


def test_unknown_include_and_duplicate_architecture(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(GOOD + "includes: [nothere]\n")
    with pytest.raises(ConfigError, match="includes: unknown catalogue 'nothere'"):
        catalogue_for("smx", tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.yaml").write_text(GOOD)
    (other / "b.yaml").write_text(GOOD)
    with pytest.raises(ConfigError, match="'smx' is in two catalogues"):
        catalogue_for("smx", other)
