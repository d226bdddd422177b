"""The pitfall catalogue shown to annotators: automatic rules plus judgement pitfalls.

Names come from the rule registry at runtime (``stereoset_eval.curation.rules.RULES`` and
``stereoset_eval.curation.rules.JUDGEMENT_PITFALLS``, imported lazily), so a rule added to the registry
appears in the next labeling config without touching this package. The fingerprint of
the catalogue goes into every prediction's ``model_version``: annotations made against
one rule set can always be told apart from those made against another.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from stereoset_eval import __version__
from stereoset_eval.foundation.errors import StereosetEvalError


@dataclass(frozen=True)
class Pitfall:
    """One checkbox of the labeling config.

    Attributes:
        name: registry name; it is also the checkbox value stored in annotations.
        description: one line shown to the annotator as the checkbox hint.
        automatic: True when a rule finds it (it can be pre-checked by a prediction),
            False for judgement pitfalls only a person can decide.
        severity: severity of the flag an annotator's check puts on the item.
    """

    name: str
    description: str
    automatic: bool
    severity: str = "warning"


def _description(obj: Any) -> str:
    if isinstance(obj, str):
        return obj
    desc = getattr(obj, "description", None) or getattr(obj, "__doc__", None) or ""
    return str(desc).strip().splitlines()[0] if str(desc).strip() else ""


def _entries(registry: Any) -> Iterable[tuple[str, Any]]:
    """(name, entry) pairs from a dict name -> entry, or an iterable of names/objects."""
    if isinstance(registry, Mapping):
        return registry.items()
    out = []
    for entry in registry:
        name = entry if isinstance(entry, str) else getattr(entry, "name", None)
        if not name:
            raise StereosetEvalError(f"judgement pitfall {entry!r} has no name")
        out.append((name, entry))
    return out


def catalogue_from_registry(rules: Mapping[str, Any], judgement: Any = ()) -> tuple[Pitfall, ...]:
    """Build the catalogue from a rule registry and a collection of judgement pitfalls.

    ``rules`` maps name -> rule (with ``.description`` and ``.automatic``); ``judgement``
    is a mapping name -> description/object or an iterable of names/objects. A name in
    both is listed once, as in ``rules``.
    """
    seen: dict[str, Pitfall] = {}
    for name, rule in _entries(rules):
        seen[name] = Pitfall(name, _description(rule), bool(getattr(rule, "automatic", True)),
                             str(getattr(rule, "severity", "warning")))
    for name, entry in _entries(judgement):
        if name not in seen:
            seen[name] = Pitfall(name, _description(entry), False)
    if not seen:
        raise StereosetEvalError("the pitfall catalogue is empty: stereoset_eval.curation.rules.RULES has no rules")
    return tuple(seen.values())


def default_catalogue() -> tuple[Pitfall, ...]:
    """The catalogue of the installed rule registry (``stereoset_eval.curation.rules``)."""
    try:
        from stereoset_eval.curation import rules
    except ImportError as exc:  # the registry is part of the package; absent = broken install
        raise StereosetEvalError(f"cannot build the pitfall catalogue: stereoset_eval.curation.rules is not importable ({exc})") from exc
    # a model judge registers itself when a run uses it: it is no checkbox, and the catalogue (and its
    # fingerprint in every prediction's model_version) must not depend on what ran before in the process
    from stereoset_eval.curation.rules.registry import listed_rules

    return catalogue_from_registry({r.name: r for r in listed_rules()}, getattr(rules, "JUDGEMENT_PITFALLS", ()))


def catalogue_fingerprint(pitfalls: Iterable[Pitfall]) -> str:
    """First 10 hex digits of sha1 over the sorted (name, automatic) pairs.

    Descriptions are left out on purpose: rewording a hint does not change what an
    annotation means.
    """
    parts = sorted(f"{p.name}\x1f{int(p.automatic)}" for p in pitfalls)
    return hashlib.sha1("\x1e".join(parts).encode("utf-8")).hexdigest()[:10]


def model_version(pitfalls: Iterable[Pitfall]) -> str:
    """Label Studio ``model_version`` of our predictions: tool version + rule set."""
    return f"stereoset-eval-{__version__}+rules.{catalogue_fingerprint(pitfalls)}"
