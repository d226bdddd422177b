"""The one CLI helper for :class:`~stereoset_eval.scoring.settings.RunSettings` (``score``, ``study``, ``demo``).

Every field of ``RunSettings`` becomes a flag (``batch_tokens`` -> ``--batch-tokens``) with the
field's own help text, choices and type, so a new scoring option needs no CLI code. Flags left
out keep the base settings' value: the defaults for ``score``, the study config's ``[study]``
values for ``study`` / ``demo``.
"""

from __future__ import annotations

import argparse
import dataclasses

from stereoset_eval.scoring.settings import RunSettings


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def add_run_settings_args(p: argparse.ArgumentParser, *, from_config: bool = False) -> None:
    """Add one flag per :class:`RunSettings` field.

    Args:
        from_config: the command runs a study config, so a flag left out keeps the config's value
            (said in the help); otherwise it keeps the field's default.
    """
    for f in dataclasses.fields(RunSettings):
        meta = f.metadata
        help_text = meta["help"]
        shown = "the study config's [study] value" if from_config else meta["shown_default"]
        help_text += f" (default: {shown})"
        kwargs = {"default": None, "help": help_text, "type": meta["kind"]}
        if meta.get("choices"):
            kwargs["choices"] = tuple(meta["choices"])
        p.add_argument(_flag(f.name), **kwargs)


def run_settings_from_args(args: argparse.Namespace, base: RunSettings | None = None) -> RunSettings:
    """``base`` (default: ``RunSettings()``) with the flags that were given, validated."""
    given = {f.name: value for f in dataclasses.fields(RunSettings)
             if (value := getattr(args, f.name, None)) is not None}
    return (base or RunSettings()).replace(**given).validate()


def run_settings_flags(args: argparse.Namespace) -> list[str]:
    """The :class:`RunSettings` flags that were given, as command-line words (to pass them on)."""
    out: list[str] = []
    for f in dataclasses.fields(RunSettings):
        value = getattr(args, f.name, None)
        if value is not None:
            out += [_flag(f.name), str(value)]
    return out
