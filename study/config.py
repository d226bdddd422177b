"""The study configuration: a small TOML file naming models, benchmarks, methods and analyses.

:func:`load_config` reads a file, :func:`parse_config` a dict (what ``tomllib`` returns), and
:func:`default_config` the packaged ``data/default_study.toml`` that ``stereoset-eval demo``
runs. Every field is checked (:mod:`stereoset_eval.study.config_parse`: types and unknown fields;
:mod:`stereoset_eval.study.config_validate`: references and ranges) before any data is read or any
model is loaded; a bad field raises :class:`StudyConfigError` naming the file and the field. The resulting
:class:`StudyConfig` is frozen and its :meth:`~StudyConfig.to_dict` goes into the report's
provenance verbatim, so a report says exactly which study produced it.
"""

from __future__ import annotations

import dataclasses
import sys
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

from stereoset_eval.study.config_model import (  # noqa: F401 - the facade re-exports the data model
    BENCHMARK_METHOD,
    MODEL_KINDS,
    SOURCES,
    UNTAGGED_RULES,
    AnalysisSpec,
    BenchmarkSpec,
    ModelSpec,
    StudyConfig,
    StudyConfigError,
)
from stereoset_eval.study.config_parse import parse
from stereoset_eval.study.config_validate import validate

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

DEFAULT_CONFIG = "default_study.toml"


def replace_config(config: StudyConfig, **changes: Any) -> StudyConfig:
    """A copy of ``config`` with ``changes`` (command-line overrides), re-validated."""
    new = dataclasses.replace(config, **changes)
    validate(new)
    return new


def parse_config(raw: Mapping[str, Any], *, source: str = "<dict>", base_dir: Path | None = None) -> StudyConfig:
    """A validated :class:`StudyConfig` from parsed TOML (see :mod:`stereoset_eval.study.config_parse`).

    Args:
        raw: the parsed file.
        source: where it came from (named in errors and in the provenance).
        base_dir: folder that relative ``data`` paths of benchmarks are resolved against
            (the config file's folder); None keeps them as written.
    """
    return parse(raw, source=source, base_dir=base_dir)


def load_config(path: str | Path) -> StudyConfig:
    """Read and validate a study TOML file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise StudyConfigError(str(path), "<file>", f"cannot read the study config ({exc.strerror or exc})") from None
    return _parse_text(text, source=str(path), base_dir=path.resolve().parent)


def _parse_text(text: str, *, source: str, base_dir: Path | None) -> StudyConfig:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise StudyConfigError(source, "<toml>", f"not valid TOML ({exc})") from None
    return parse_config(raw, source=source, base_dir=base_dir)


def default_config_text() -> str:
    """The text of the packaged default study (``data/default_study.toml``)."""
    return resources.files("stereoset_eval.data").joinpath(DEFAULT_CONFIG).read_text(encoding="utf-8")


def default_config() -> StudyConfig:
    """The packaged default study: the one ``stereoset-eval demo`` runs."""
    return _parse_text(default_config_text(), source=f"package data/{DEFAULT_CONFIG}", base_dir=None)
