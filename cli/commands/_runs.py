"""Run folders: a folder holding a different run is never overwritten silently; limited runs go elsewhere.

A run's identity is what changes its numbers (models, benchmarks, methods, options, limit …),
not where it was read from or cached. Rerunning the same run into its folder replaces it
(scores come from the cache); a different run into an occupied folder stops with one line
naming the differences, unless ``--overwrite`` is given.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from stereoset_eval.foundation.errors import StereosetEvalError

#: study config fields that do not change any number (where things are read, cached or written)
STUDY_IGNORED = frozenset({"output", "source", "data_dir", "download", "cache_dir", "use_cache", "title"})


class RunFolderError(StereosetEvalError):
    """The output folder holds a different run."""


def limited_folder(folder: str | Path, limit: int | None) -> str:
    """The default folder of a ``--limit N`` run: ``runs/demo`` -> ``runs/demo-limit-N``."""
    return str(folder) if not limit else f"{str(folder).rstrip('/')}-limit-{limit}"


def study_identity(config_dict: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in config_dict.items() if k not in STUDY_IGNORED}


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    return sorted(k for k in set(old) | set(new) if json.dumps(old.get(k), sort_keys=True, default=str)
                  != json.dumps(new.get(k), sort_keys=True, default=str))


def guard(folder: str | Path, *, marker: str, identity: Mapping[str, Any], stored: Mapping[str, Any] | None,
          overwrite: bool, what: str) -> None:
    """Raise :class:`RunFolderError` when ``folder/marker`` records a run other than ``identity``."""
    folder = Path(folder)
    if overwrite or not (folder / marker).exists():
        return
    if stored is None:
        raise RunFolderError(f"{folder}: holds {marker} of a run this command cannot read; "
                             f"choose another --output, or pass --overwrite to replace it")
    diff = _differences(stored, identity)
    if diff:
        raise RunFolderError(f"{folder}: holds a different {what} (differs in {', '.join(diff)}); "
                             f"choose another --output, or pass --overwrite to replace it")


def guard_study(folder: str | Path, config_dict: Mapping[str, Any], *, overwrite: bool) -> None:
    report = _read_json(Path(folder) / "report.json")
    stored = (((report or {}).get("provenance") or {}).get("extra") or {}).get("study") if report else None
    guard(folder, marker="report.json", identity=study_identity(config_dict),
          stored=study_identity(stored) if isinstance(stored, Mapping) else None, overwrite=overwrite, what="study")


#: ``score`` command fields that do not change a number
SCORE_IGNORED = frozenset({"no_cache", "overwrite"})


def score_identity(command: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in command.items() if k not in SCORE_IGNORED}


def guard_scores(folder: str | Path, command: Mapping[str, Any], *, overwrite: bool) -> None:
    prov = _read_json(Path(folder) / "provenance.json")
    stored = (prov or {}).get("command") if prov else None
    guard(folder, marker="provenance.json", identity=score_identity(command),
          stored=score_identity(stored) if isinstance(stored, Mapping) else None, overwrite=overwrite,
          what="scoring run")
