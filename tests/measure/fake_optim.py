"""A fake ``torch.optim`` and ``torch.zeros`` for the optimizer cases of the backend tests."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from tests.measure.fakes import FakeTensor, FakeTorch

__all__ = ["with_fake_optim"]


def with_fake_optim(torch: FakeTorch) -> FakeTorch:
    """``torch`` with ``zeros`` and ``optim.SGD``, ``Adam`` and ``AdamW`` whose ``step`` logs
    ``("<name>.step", parameter shapes, the optimizer's keyword arguments)`` as a launch."""

    def optimizer(name: str) -> Any:
        class Fake:
            def __init__(self, params: list[FakeTensor], **kwargs: Any) -> None:
                assert all(p.grad is not None for p in params)
                self.params, self.kwargs = params, kwargs

            def step(self) -> None:
                shapes = tuple(p.shape for p in self.params)
                torch.kernels.append((f"{name}.step", shapes, self.kwargs))
                torch.calls["launch"] += 1
                torch.activity(name, torch.kernel_us)

        return Fake

    def zeros(size: int, dtype: str, device: str, requires_grad: bool) -> FakeTensor:
        tensor = FakeTensor(torch, (size,), dtype)
        tensor.grad = None
        return tensor.requires_grad_(requires_grad)

    torch.zeros = zeros  # type: ignore[attr-defined]
    torch.optim = SimpleNamespace(  # type: ignore[attr-defined]
        SGD=optimizer("SGD"), Adam=optimizer("Adam"), AdamW=optimizer("AdamW")
    )
    return torch
