"""The model registry: names, lookup errors and duplicate refusal."""

from __future__ import annotations

import pytest

from opmodel import UnknownNameError
from opmodel.models import get_model, model_names, register_model
from opmodel.models.roofline import RooflineModel


def test_roofline_is_registered() -> None:
    assert "roofline" in model_names()
    assert isinstance(get_model("roofline"), RooflineModel)


def test_unknown_name_lists_valid_ones() -> None:
    with pytest.raises(UnknownNameError) as info:
        get_model("roofline2")
    assert str(info.value).startswith(
        "unknown model 'roofline2'; did you mean 'roofline'? (valid: "
    )


def test_duplicate_names_are_refused() -> None:
    class Again:
        name = "roofline"

    with pytest.raises(ValueError, match="already registered"):
        register_model(Again)
