"""Rules about single sentences, the dataset as a whole, and load-time anomalies.

``inconsistent_gender`` is a heuristic without coreference, within one sentence (split at
``. ! ? ;``): a reflexive must agree with the nearest gendered word before it ("She … herself",
not "her … himself"); and a subject pronoun or possessive determiner must agree with at
least one person mentioned before it when a gendered name is among them ("Marie … he went"
is flagged; "Brad … Beth and her dog" and "Sam called Earl because she" are not).
"""

from __future__ import annotations

from typing import Any

from stereoset_eval.curation.gender_swap import next_words, resolve_her
from stereoset_eval.foundation.items import DIRECTIONS, Flag, Item
from stereoset_eval.curation.loaders.crows import CROWS_BIAS_TYPES
from stereoset_eval.curation.rules.registry import decides, evidence_only_flag, rule
from stereoset_eval.curation.spans import term_info
from stereoset_eval.curation.text import SENTENCE_END, is_word, split_clitic, tokenize, whitespace_words

STEREOSET_BIAS_TYPES = ("gender", "profession", "race", "religion")
REFLEXIVES = {"himself": "male", "herself": "female"}
SUBJECT_OR_POSSESSIVE = {"he": "male", "she": "female", "his": "male"}
BLANK_RULES = ("blank_count", "blank_at_start", "blank_glued")


def _pronoun_gender(tokens: list[str], j: int) -> str | None:
    """Gender of a subject pronoun or possessive determiner at ``j`` (None otherwise)."""
    low = split_clitic(tokens[j])[0].lower()
    if low == "her":
        n1, n2 = next_words(tokens, j)
        return "female" if resolve_her(n1, n2)[0] == "his" else None
    return SUBJECT_OR_POSSESSIVE.get(low)


def gender_inconsistencies(text: str) -> list[dict[str, Any]]:
    """Reflexive and name/pronoun disagreements inside ``text`` (see module docstring).

    >>> [f["kind"] for f in gender_inconsistencies("I think her was working on it himself.")]
    ['reflexive']
    >>> gender_inconsistencies("Brad ran to save Beth and her dog."), len(gender_inconsistencies("Marie said he left."))
    ([], 1)
    """
    tokens = tokenize(text)
    found: list[dict[str, Any]] = []
    # mentions in the current sentence: (token, gender or None, is_name)
    mentions: list[tuple[str, str | None, bool]] = []
    last_gendered: tuple[str, str] | None = None
    for i, tok in enumerate(tokens):
        if tok in SENTENCE_END:
            mentions, last_gendered = [], None
            continue
        if not is_word(tok):
            continue
        base = split_clitic(tok)[0].lower()
        info = term_info(tokens, i)
        if base in REFLEXIVES and last_gendered and last_gendered[1] != REFLEXIVES[base]:
            found.append({"kind": "reflexive", "tokens": [last_gendered[0], tok],
                          "genders": [last_gendered[1], REFLEXIVES[base]]})
        pronoun = _pronoun_gender(tokens, i)
        if pronoun:
            names = [m for m in mentions if m[2] and m[1]]
            if names and all(m[1] is not None and m[1] != pronoun for m in mentions):
                found.append({"kind": "name", "tokens": [names[-1][0], tok], "genders": [names[-1][1], pronoun]})
        if info.kind == "name":
            mentions.append((tok, info.gender, True))
        elif info.kind == "gender":
            mentions.append((tok, info.gender, False))
        if info.kind in ("gender", "name") and info.gender and base not in REFLEXIVES:
            last_gendered = (tok, info.gender)
    return found


@rule("inconsistent_gender", instance_effect="hold", order=55, needs=("lexicon",),
      retired="3.1: its hold of source pairs (rules 2.0): held-out 1 hold needed of 1 graded (p 0.5), too few "
              "to support it; right 0-33 % on the expert gold's other half",
      description="Gender disagrees within a sentence (she … himself; 'Marie … he'): after editing, the instance "
                  "waits for a person (a guard of the swap); in the source sentences, evidence for the reviewer "
                  "(it held the source pair before 3.1).")
def inconsistent_gender(item: Item, ctx) -> Flag | None:
    hits = {}
    # on a curated instance an edited sentence that disagrees holds the instance (the edit broke it); an
    # unedited one is the source's own inconsistency: it held the source pair until rules 3.1, and is now
    # evidence for the reviewer only
    edited = {e.sentence_role for e in item.provenance.edits} if getattr(ctx, "stage", "pair") == "instance" else None
    for s in item.sentences:
        if edited is not None and s.role not in edited and decides("inconsistent_gender"):
            continue
        found = gender_inconsistencies(s.text)
        if found:
            hits[s.role] = found
    if not hits:
        return None
    msg = "; ".join(f"{role}: " + ", ".join("/".join(f["tokens"]) for f in fs) for role, fs in hits.items())
    evidence: dict[str, Any] = {"roles": sorted(hits), "findings": hits}
    if (edited is None or not set(hits) & edited) and not decides("inconsistent_gender"):
        return evidence_only_flag("inconsistent_gender", item.id, "in the source sentences: " + msg, evidence)
    return ctx.rule.flag(item, msg, evidence)


def _shorter_than(item: Item, words: int) -> dict[str, int]:
    """Role -> word count of each sentence of ``item`` with fewer than ``words`` whitespace-separated words."""
    counts = {s.role: len(whitespace_words(s.text)) for s in item.sentences}
    return {r: n for r, n in counts.items() if n < words}


@rule("too_short", severity="info",
      description="A sentence has fewer than RuleConfig.min_words whitespace-separated words.")
def too_short(item: Item, ctx) -> Flag | None:
    short = _shorter_than(item, ctx.config.min_words)
    if not short:
        return None
    return ctx.rule.flag(
        item, f"fewer than {ctx.config.min_words} words: " + ", ".join(f"{r} ({n})" for r, n in short.items()),
        {"words": short, "min_words": ctx.config.min_words},
    )


@rule("short_template", effect="remove", order=50, severity="error",
      description="A sentence has fewer than RuleConfig.remove_below_words words: a bare template too brief "
                  "to carry a stereotype ('The schoolboy is athletic/religious'); the pair is removed.")
def short_template(item: Item, ctx) -> Flag | None:
    short = _shorter_than(item, ctx.config.remove_below_words)
    if not short:
        return None
    return ctx.rule.flag(
        item, f"fewer than {ctx.config.remove_below_words} words: " + ", ".join(f"{r} ({n})" for r, n in short.items()),
        {"words": short, "remove_below_words": ctx.config.remove_below_words},
    )


@rule("exact_duplicate", instance_effect="drop_instance", needs=("dataset",),
      description="Same pair of word sequences (case and punctuation aside) as an earlier item, "
                  "or the same pair with the roles reversed.")
def exact_duplicate(item: Item, ctx) -> Flag | None:
    hit = ctx.exact_duplicates().get(item.id)
    if not hit:
        return None
    first, reversed_ = hit
    return ctx.rule.flag(
        item, f"duplicate of {first}" + (" with sent_more/sent_less reversed" if reversed_ else ""),
        {"first": first, "reversed": reversed_},
        severity="error" if reversed_ else None,
    )


@rule("near_duplicate", needs=("dataset",), severity="info",
      description="Word-set Jaccard with an earlier item at least RuleConfig.near_duplicate_jaccard.")
def near_duplicate(item: Item, ctx) -> Flag | None:
    hit = ctx.near_duplicates().get(item.id)
    if not hit:
        return None
    return ctx.rule.flag(
        item, f"near duplicate of {hit[0]} (Jaccard {hit[1]:.3f})",
        {"first": hit[0], "jaccard": round(hit[1], 4), "threshold": ctx.config.near_duplicate_jaccard},
    )


@rule("blank_anomaly",
      description="StereoSet BLANK anomaly found at load time (two BLANKs, BLANK at the start, BLANK glued "
                  "to letters; see stereoset_eval.curation.loaders.anomalies).")
def blank_anomaly(item: Item, ctx) -> Flag | None:
    found = [f for f in item.flags if f.rule in BLANK_RULES]
    if not found:
        return None
    severity = "info" if all(f.rule == "blank_at_start" for f in found) else "warning"
    return ctx.rule.flag(
        item, "; ".join(f"{f.rule}: {f.message}" for f in found),
        {"load_flags": [f.rule for f in found]}, severity=severity,
    )


@rule("unknown_label", severity="error",
      description="Unknown or normalised label fields: bias type outside the benchmark's list, a direction "
                  "other than stereo/antistereo, or a label the loader had to normalise.")
def unknown_label(item: Item, ctx) -> Flag | None:
    problems = [f.message for f in item.flags if f.rule == "label_normalised"]
    if item.bias_type not in set(CROWS_BIAS_TYPES) | set(STEREOSET_BIAS_TYPES):
        problems.append(f"bias type {item.bias_type!r} is unknown")
    if item.direction is not None and item.direction not in DIRECTIONS:
        problems.append(f"direction {item.direction!r} is unknown")
    if not problems:
        return None
    return ctx.rule.flag(item, "; ".join(problems), {"problems": problems})


@rule("known_erratum", effect="remove", order=10, needs=("known_errata",), severity="error",
      description="The source row is documented as invalid in the literature (data/known_errata.json).")
def known_erratum(item: Item, ctx) -> Flag | None:
    found = [f for f in item.flags if f.rule == "known_erratum"]
    if not found:
        return None
    return ctx.rule.flag(item, found[0].message, dict(found[0].evidence))
