"""The Label Studio labeling config (XML) for reviewing curated pairs, and its checks.

One task = one pair. The annotator sees the pair (``sent_more`` / ``sent_less``), the
original sentences before automatic edits, the automatic findings, and answers:

* ``pitfalls``  — checkboxes, one per pitfall of the catalogue (automatic + judgement);
* ``dimension`` — single choice among the four stereotype dimensions or ``unclear``;
* ``decision``  — ``keep`` / ``edit`` / ``remove`` (required);
* ``edited_sent_more`` / ``edited_sent_less`` — text areas pre-filled (by the prediction)
  with the proposed sentences, changed by the annotator when the decision is ``edit``;
* ``comment``   — free text, used as the reason of a removal.

Generating the XML needs no third-party package; validating it uses the SDK's offline
``LabelInterface`` (extra ``stereoset-eval[labelstudio]``).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Sequence
from xml.sax.saxutils import quoteattr

from stereoset_eval.foundation.errors import StereosetEvalError
from stereoset_eval.foundation.items import PAIR_ROLES
from stereoset_eval.curation.labelstudio.pitfalls import Pitfall

CONFIG_MARKER = "stereoset-eval pair review v1"
DIMENSIONS: tuple[str, ...] = (
    "Personality Traits", "Attitudes and Beliefs", "Roles and Behaviors", "Physical Characteristics",
)
UNCLEAR = "unclear"
DIMENSION_CHOICES: tuple[str, ...] = DIMENSIONS + (UNCLEAR,)
DECISIONS: tuple[str, ...] = ("keep", "edit", "remove")

# object (Text) names = task data keys
TEXT_OBJECTS: tuple[str, ...] = ("sent_more", "sent_less", "orig_sent_more", "orig_sent_less", "auto_findings")
PITFALLS = "pitfalls"
DIMENSION = "dimension"
DECISION = "decision"
COMMENT = "comment"
EDITED: dict[str, str] = {role: f"edited_{role}" for role in PAIR_ROLES}
CONTROLS: dict[str, str] = {  # control name -> tag (lower case)
    PITFALLS: "choices", DIMENSION: "choices", DECISION: "choices",
    EDITED["sent_more"]: "textarea", EDITED["sent_less"]: "textarea", COMMENT: "textarea",
}
ANCHOR = "sent_more"  # the object every per-task control points to


def labeling_config(pitfalls: Sequence[Pitfall]) -> str:
    """The labeling config XML for ``pitfalls`` (see the module docstring for the layout).

    Deterministic: the same catalogue gives the same bytes, so a project's config can be
    compared with the one the toolkit would generate.
    """
    q = quoteattr
    lines = [
        "<View>",
        f"  <Header value={q(CONFIG_MARKER)} size=\"6\"/>",
        "  <Header value=\"Item $item_id ($source, $bias_type, $direction)\" size=\"5\"/>",
        "  <Header value=\"More stereotypical sentence (sent_more)\" size=\"6\"/>",
        "  <Text name=\"sent_more\" value=\"$sent_more\"/>",
        "  <Header value=\"Less stereotypical sentence (sent_less)\" size=\"6\"/>",
        "  <Text name=\"sent_less\" value=\"$sent_less\"/>",
        "  <Header value=\"Original sentences, before automatic edits\" size=\"6\"/>",
        "  <Text name=\"orig_sent_more\" value=\"$orig_sent_more\"/>",
        "  <Text name=\"orig_sent_less\" value=\"$orig_sent_less\"/>",
        "  <Header value=\"Automatic findings\" size=\"6\"/>",
        "  <Text name=\"auto_findings\" value=\"$auto_findings\"/>",
        "  <Header value=\"Pitfalls (automatic rules and judgement)\" size=\"6\"/>",
        f"  <Choices name=\"{PITFALLS}\" toName=\"{ANCHOR}\" choice=\"multiple\">",
    ]
    names = [p.name for p in pitfalls]
    if len(set(names)) != len(names):
        raise StereosetEvalError(f"duplicate pitfall names in the catalogue: {names}")
    for p in pitfalls:
        kind = "automatic" if p.automatic else "judgement"
        lines.append(f"    <Choice value={q(p.name)} hint={q(f'[{kind}] {p.description}')}/>")
    lines += [
        "  </Choices>",
        "  <Header value=\"Stereotype dimension\" size=\"6\"/>",
        f"  <Choices name=\"{DIMENSION}\" toName=\"{ANCHOR}\" choice=\"single-radio\">",
        *(f"    <Choice value={q(d)}/>" for d in DIMENSION_CHOICES),
        "  </Choices>",
        "  <Header value=\"Decision\" size=\"6\"/>",
        f"  <Choices name=\"{DECISION}\" toName=\"{ANCHOR}\" choice=\"single-radio\" required=\"true\">",
        *(f"    <Choice value={q(d)}/>" for d in DECISIONS),
        "  </Choices>",
        "  <Header value=\"Edited sentences (used when the decision is edit)\" size=\"6\"/>",
        *(f"  <TextArea name=\"{EDITED[r]}\" toName=\"{r}\" maxSubmissions=\"1\" editable=\"true\" rows=\"2\"/>"
          for r in PAIR_ROLES),
        "  <Header value=\"Comment (the reason, when removing)\" size=\"6\"/>",
        f"  <TextArea name=\"{COMMENT}\" toName=\"{ANCHOR}\" maxSubmissions=\"1\" editable=\"true\" rows=\"2\"/>",
        "</View>",
    ]
    return "\n".join(lines) + "\n"


def validate_config(xml: str) -> None:
    """Validate ``xml`` with the SDK's offline ``LabelInterface``; StereosetEvalError if bad."""
    interface_class = label_interface_class()
    try:
        interface_class(xml).validate()
    except Exception as exc:  # the SDK raises its own validation error types
        raise StereosetEvalError(f"invalid Label Studio labeling config: {exc}") from None


def label_interface_class():
    """The SDK's offline ``LabelInterface`` class; a clear error when the SDK is absent."""
    try:
        from label_studio_sdk.label_interface import LabelInterface
    except ImportError:
        raise StereosetEvalError(
            "label-studio-sdk is not installed: pip install 'stereoset-eval[labelstudio]'"
        ) from None
    return LabelInterface


@dataclass(frozen=True)
class ConfigSchema:
    """What a labeling config asks: control name -> (tag, choice values in order)."""

    marker: bool
    controls: dict[str, tuple[str, tuple[str, ...]]]

    @property
    def pitfall_names(self) -> tuple[str, ...]:
        return self.controls.get(PITFALLS, ("", ()))[1]


def read_schema(xml: str) -> ConfigSchema:
    """Parse the controls of a labeling config (no SDK needed).

    Raises:
        StereosetEvalError: the XML does not parse.
    """
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise StereosetEvalError(f"labeling config is not well-formed XML: {exc}") from None
    controls: dict[str, tuple[str, tuple[str, ...]]] = {}
    marker = False
    for el in root.iter():
        tag = el.tag.lower()
        if tag == "header" and el.get("value") == CONFIG_MARKER:
            marker = True
        name = el.get("name")
        if tag in ("choices", "textarea") and name:
            values = tuple(c.get("value", "") for c in el if c.tag.lower() == "choice")
            controls[name] = (tag, values)
    return ConfigSchema(marker=marker, controls=controls)


def schema_problems(found: ConfigSchema, expected: ConfigSchema, *, compare_pitfalls: bool) -> list[str]:
    """Differences that make annotations of ``found`` unreadable as ``expected``.

    Pitfall checkboxes are compared only when ``compare_pitfalls``: a project made with an
    older rule set still parses (its own pitfall list is used), but new tasks must not be
    pushed into it.
    """
    problems = []
    if not found.marker:
        problems.append(f"not a stereoset-eval config (no {CONFIG_MARKER!r} header)")
    for name, (tag, values) in expected.controls.items():
        if name not in found.controls:
            problems.append(f"missing control {name!r}")
            continue
        ftag, fvalues = found.controls[name]
        if ftag != tag:
            problems.append(f"control {name!r} is a {ftag}, expected {tag}")
        elif name == PITFALLS:
            if compare_pitfalls and set(fvalues) != set(values):
                added, gone = sorted(set(fvalues) - set(values)), sorted(set(values) - set(fvalues))
                problems.append(f"pitfall choices differ (project has extra {added}, lacks {gone})")
        elif tuple(fvalues) != tuple(values):
            problems.append(f"choices of {name!r} are {list(fvalues)}, expected {list(values)}")
    return problems
