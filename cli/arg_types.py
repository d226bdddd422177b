"""``argparse`` types that bound numbers, so a bad value fails at once with a clear line."""

from __future__ import annotations

import argparse
from typing import Callable


def bounded_int(low: int, high: int) -> Callable[[str], int]:
    """An integer in ``[low, high]``; argparse prints the problem as its one error line."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low:,} and {high:,}, got {value:,}")
        return value

    parse.__name__ = "integer"
    return parse
