"""Show a report's headline results on the terminal and write ``results.json`` beside it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stereoset_eval.analysis.results_table import format_leaderboard, format_table, result_rows, results_json
from stereoset_eval.foundation.atomic import atomic_write_text


def show_results(report: Any, folder: Path, *, title: str, limit: int | None = None, write: bool = True) -> Path:
    """Print the lm-eval-style table of ``report`` (a Report); write ``folder/results.json`` unless the
    report writer already did (``write=False``: report and study write it inside their output set)."""
    rows = result_rows(report, limit=limit)  # the benchmarks' typed headline results, as results.json holds them
    path = Path(folder) / "results.json"
    if write:
        atomic_write_text(path, results_json(rows))
    print()
    print(format_table(rows, title=title))
    print()
    board = format_leaderboard(rows, limit=limit)  # two models or more: one row each, ranked
    if board:
        print(board)
        print()
    return path
