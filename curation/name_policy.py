"""Whose names and pronouns a gender swap touches: the name policies of normalisation.

A given name is swapped only to the source pair's own counterpart or a same-origin name of the
other gender (:mod:`stereoset_eval.curation.lexicon.name_counterparts`); a CrowS-Pairs pronoun of
the other grammatical number is another person and stays; an as-is pair whose names contradict
its swapped pronoun (``name_conflict``) or that swaps a name for one of either gender
(``ambiguous_name_swap``) cannot be finished by a rule. Split out of :mod:`.normalise`.
"""

from __future__ import annotations

from stereoset_eval.curation.lexicon import GENDER_OF, name_counterparts, name_gender
from stereoset_eval.curation.spans import PairAnalysis, term_info
from stereoset_eval.curation.text import is_word, split_clitic, tokenize


def pair_name_map(analysis: PairAnalysis) -> dict[str, str]:
    """The source pair's own name counterparts: names facing each other in a differing span.

    CrowS-Pairs writers often perturbed the name with the attribute ("Carol was praised …" /
    "Andrew was teased …"); the curated instances swap Carol ↔ Andrew, as the gold does.
    """
    out: dict[str, str] = {}
    for span in analysis.of_kind("group", "mixed", "attribute"):
        m = [(i, t) for i, t in span.more if term_info(list(analysis.more_tokens), i).kind in ("name", "possible_name")]
        le = [(i, t) for i, t in span.less if term_info(list(analysis.less_tokens), i).kind in ("name", "possible_name")]
        if len(m) == 1 and len(le) == 1:
            a, b = m[0][1].removesuffix("'s"), le[0][1].removesuffix("'s")
            ga, gb = name_gender(a)[1], name_gender(b)[1]
            if a.lower() != b.lower() and not (ga and gb and ga == gb):
                out[a.lower()] = b
                out[b.lower()] = a
    return out


def name_map_for(text: str, own: dict[str, str], *, min_confidence: float = name_counterparts.MIN_CONFIDENCE,
                 target_gender: str | None = None) -> tuple[dict[str, str], list[dict[str, object]]]:
    """Name → counterpart for the gendered names of ``text``, with the evidence of each choice.

    The source pair's own counterpart first (``own``); else the lexicon's other-gender,
    same-origin name (:mod:`stereoset_eval.curation.lexicon.name_counterparts`) when its
    confidence reaches ``min_confidence``; else none (the name is held for review).
    """
    from stereoset_eval.curation.repair import is_lowercase_name

    out: dict[str, str] = {}
    evidence: list[dict[str, object]] = []
    tokens = tokenize(text)
    for i, tok in enumerate(tokens):
        base = tok.removesuffix("'s")
        if not is_word(base):
            continue
        is_name, gender = name_gender(base.capitalize() if is_lowercase_name(tokens, i) else base)
        low = base.lower()
        if target_gender is not None and (tok.endswith("'s") or gender != target_gender):
            continue  # StereoSet: a name is swapped only as the target ("Little timmy"), never as a possessor
        if not is_name or low in out:
            continue
        if low in own:
            out[low] = own[low]
            evidence.append({"name": base, "counterpart": own[low], "source": "the source pair", "confidence": 1.0})
            continue
        if gender is None:
            continue
        c = name_counterparts.counterpart(base, gender)
        if c is not None and c.confidence >= min_confidence:
            out[low] = c.counterpart
            evidence.append(c.evidence())
    return out, evidence


SINGULAR_PRONOUNS = frozenset("he she him her his hers himself herself".split())


def other_number_indices(text: str, analysis: PairAnalysis, side: str) -> frozenset[int]:
    """Gendered words outside the perturbed span whose number differs from the target's.

    CrowS-Pairs: the perturbed group term is the target. A singular pronoun next to a plural
    target ("He wasn't good at pretending like women are") is another person and stays, and so
    is a plural group next to a singular target. Words of the same number are swapped (they may
    refer to the target: "Women … their").
    """
    tokens = tokenize(text)
    spans = {i for sp in analysis.of_kind("group", "mixed") for i, _ in (sp.more if side == "more" else sp.less)}
    target = [split_clitic(tokens[i])[0].lower() for i in spans if GENDER_OF.get(split_clitic(tokens[i])[0].lower())]
    if not target:
        return frozenset()
    plural_target = all(t not in SINGULAR_PRONOUNS and t.endswith(("men", "s")) for t in target)
    out = set()
    for i, tok in enumerate(tokens):
        low = split_clitic(tok)[0].lower()
        if i in spans or not is_word(tok) or low not in GENDER_OF:
            continue
        singular = low in SINGULAR_PRONOUNS or not low.endswith(("men", "s"))
        if plural_target == singular:
            out.add(i)
    return frozenset(out)


def name_conflict(analysis: PairAnalysis) -> str | None:
    """Why an as-is pair contradicts its own names (None when it does not).

    The swapped words are pronouns, or a singular group noun the person is said to be ("being a
    male"; not relatives, partners or plural groups, who are other people), and every gendered given name left unchanged in the pair is of the other gender than
    the swapped word in one sentence ("Denny took his / her wedding ring off", "Kate's one … for
    being the car of a man / woman"): one side describes the named person with the wrong gender,
    which no mechanical edit repairs (the gold's ``unclear``). Unisex-listed names count with the
    name dictionary's gender when at least 90 % of its frequency mass is one gender.
    """
    from stereoset_eval.curation.lexicon import KIND_OF

    for side, tokens in (("more", analysis.more_tokens), ("less", analysis.less_tokens)):
        span_idx = {i for sp in analysis.of_kind("group") for i, _ in (sp.more if side == "more" else sp.less)}
        words = [t.lower() for t in tokens if is_word(t)]
        swapped = set()
        for i in span_idx:
            w = split_clitic(tokens[i])[0].lower()
            if w not in GENDER_OF:
                continue
            if KIND_OF.get(w) in ("pronoun", "possessive", "reflexive"):
                swapped.add(GENDER_OF[w])
            elif KIND_OF.get(w) == "group" and not w.endswith(("men", "s")):
                # a singular group noun describes the named person only as what they are "being"
                k = sum(1 for t in tokens[:i] if is_word(t))
                if "being" in words[max(0, k - 5):k]:
                    swapped.add(GENDER_OF[w])
        if len(swapped) != 1 or any(name_gender(split_clitic(tokens[i])[0])[0] for i in span_idx):
            continue  # a swapped name is the target: other names are other people
        g = swapped.pop()
        names = []
        for i, tok in enumerate(tokens):
            base = split_clitic(tok)[0]
            if i in span_idx or not is_word(tok):
                continue
            known, ng = name_gender(base)
            if known and ng is None:
                dg, share = name_counterparts.name_gender_share(base)
                ng = dg if share >= name_counterparts.MIN_GENDER_SHARE else None
            if known:
                names.append((base, ng))
        # a name of either gender may be the one the swapped word refers to: no conflict then
        if names and all(ng is not None and ng != g for _, ng in names):
            return f"sent_{side}: {', '.join(n for n, _ in names)} read as {names[0][1]} but the swapped word is {g}"
    return None


def ambiguous_name_swap(analysis: PairAnalysis) -> str | None:
    """A name swapped for a name that is not clearly of the other gender ("Jenny" / "Alex").

    A name read as either gender (the names lexicon's unisex list, and under 90 % one gender in
    the name dictionary) does not make a gender swap; a person decides (the issue's "Jenny/Alex").
    """
    for span in analysis.of_kind("group"):
        for (i, a), (j, b) in zip(span.more, span.less):
            for tok in (a, b):
                base = split_clitic(tok)[0]
                known, g = name_gender(base)
                if known and g is None:
                    _, share = name_counterparts.name_gender_share(base)
                    if share < name_counterparts.MIN_GENDER_SHARE:
                        return f"{a} / {b}: {base} is read as either gender"
    return None
