"""``AttrSpec``: one accepted op attribute and the check of a value against it (the schema of
every kind's attributes is :mod:`opmodel.core.attrs`)."""

from __future__ import annotations

from dataclasses import dataclass

from opmodel.core.errors import did_you_mean

__all__ = ["AttrSpec"]


@dataclass(frozen=True, slots=True, kw_only=True)
class AttrSpec:
    """One accepted attribute: its Python type (``tuple``: a list of integers), accepted
    strings, and integer minimum."""

    name: str
    kind: type
    choices: tuple[str, ...] = ()
    minimum: int | None = None
    doc: str = ""

    def check(self, value: object) -> str | None:
        """Return a problem description for ``value``, or None when it is acceptable."""
        if self.kind is bool:
            return (
                None if isinstance(value, bool) else f"must be a boolean true/false (got {value!r})"
            )
        if self.kind is int:
            return self._check_int(value)
        if self.kind is tuple:
            return self._check_ints(value)
        if not isinstance(value, str) or (self.choices and value not in self.choices):
            hint = did_you_mean(value, self.choices) if isinstance(value, str) else ""
            return f"must be one of {', '.join(self.choices)} (got {value!r}){hint}"
        return None

    def _check_ints(self, value: object) -> str | None:
        """A non-empty list of integers, each at least ``minimum``."""
        if not isinstance(value, list | tuple) or not value:
            return f"must be a non-empty list of integers (got {value!r})"
        for index, item in enumerate(value):
            problem = self._check_int(item)
            if problem is not None:
                return f"[{index}] {problem}"
        return None

    def _check_int(self, value: object) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int):
            return f"must be an integer (got {value!r})"
        if self.minimum is not None and value < self.minimum:
            return f"must be >= {self.minimum} (got {value!r})"
        return None
