"""A named registry: the one pattern behind the benchmark, statistic and scoring-method tables.

Each table maps a name to one object, refuses a second, different object under a taken name, and
answers an unknown name with :class:`~stereoset_eval.foundation.errors.UnknownNameError`, which
lists the known names and suggests the closest. It is a read-only :class:`~typing.Mapping` for
everyone else (``in``, iteration, ``.get`` work as on a dict).
"""

from __future__ import annotations

from typing import Generic, Iterator, Mapping, TypeVar

from stereoset_eval.foundation.errors import UnknownNameError

T = TypeVar("T")


class Registry(Mapping[str, T], Generic[T]):
    """Name -> object, in registration order; ``kind`` names the entries in error messages."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}

    def add(self, name: str, entry: T) -> T:
        """Register ``entry`` under ``name`` (again with the same object is a no-op); returns it."""
        if name in self._entries and self._entries[name] is not entry:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._entries[name] = entry
        return entry

    def remove(self, name: str) -> T:
        """Unregister ``name`` (a plug-in's test cleans up after itself); returns the entry."""
        entry = self[name]
        del self._entries[name]
        return entry

    def __getitem__(self, name: str) -> T:
        try:
            return self._entries[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, sorted(self._entries)) from None

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {list(self._entries)})"
