"""Published gender-association word lists: which attributes a culture ties to men or to women.

The validity and direction rules (:mod:`stereoset_eval.curation.validity`) ask of an attribute
word whether it carries a gender stereotype and for which gender. These small lists are the
published evidence (lower case; an entry ending in ``*`` is a stem, matched as a prefix, as in
the source):

* ``BEM_1974`` — Bem, S. L. (1974). The measurement of psychological androgyny. *Journal of
  Consulting and Clinical Psychology*, 42(2), 155–162: the 20 masculine and 20 feminine items of
  the Bem Sex Role Inventory, multi-word items reduced to their head word ("acts as a leader" →
  leader, "has leadership abilities" → leadership, "defends own beliefs" → defend,
  "strong personality" → strong, "willing to take risks" → risks, "makes decisions easily" →
  decisions, "eager to soothe hurt feelings" → soothe, "sensitive to the needs of others" →
  sensitive, "loves children" → children); "willing to take a stand" and "does not use harsh
  language" have no head word and are left out. Checked (rules 2.1) against the 60-item BSRI as
  reproduced in public questionnaire implementations: "decisive" and "risk-taking" (paraphrases,
  not items) were replaced by the items' own words.
* ``GAUCHER_2011`` — Gaucher, D., Friesen, J., & Kay, A. C. (2011). Evidence that gendered
  wording in job advertisements exists and sustains gender inequality. *JPSP*, 101(1), 109–128,
  Appendix A: masculine- and feminine-coded words (stems as published). Checked (rules 2.1)
  against the lists of Matfield's gender-decoder, which reproduces the appendix: ``respon*``
  (feminine) was missing and is added; the words gender-decoder adds beyond the appendix
  (battle, champion, decid*, defend*, driven, fearless, fight*, unreasonab*; agree*, collab*,
  feel*, enthusias*, inclusive, shar*) are not taken.
* ``WILLIAMS_BEST_1990`` — Williams, J. E., & Best, D. L. (1990). *Measuring sex stereotypes: A
  multination study*: adjectives of the Adjective Check List associated with men or women in a
  consensus of the 25 countries (the items most consistently assigned). Checked (rules 2.1)
  against a published reproduction of the 49 male-associated items (agreement in ≥ 19 of 25
  countries): lazy, serious, wise, practical, humorous, energetic, egotistical, progressive,
  confident, shrewd, clear-thinking and frank were missing and are added. The female items
  (25 in the consensus table) could not be checked: no reproduction of that table was found
  (issue 14: code, pages and docs searched), so the 36 female entries are as before and some of
  them are not consensus items. A weaker check only: every entry of both halves is an Adjective
  Check List item in the Williams & Best scores reproduced by Garg et al. (2018),
  nikhgarg/EmbeddingDynamicStereotypes ``data/adjectives_williamsbest.csv`` (there spelt
  hard-headed, hard-hearted, soft-hearted), and on its 1990 scale (share of raters calling the
  adjective male) every female entry scores ≤ 33 and every male entry ≥ 60 — no entry is on the
  wrong side, but membership of the consensus table is unverified.
* ``MADERA_2009`` — Madera, J. M., Hebl, M. R., & Martin, R. C. (2009). Gender and letters of
  recommendation for academia: agentic and communal differences. *Journal of Applied
  Psychology*, 94(6), 1591–1599: the agentic (male-typed) and communal (female-typed) adjectives.
  Checked (issue 14) against the agentic and communal lists reproduced, as stems, in the code of
  Wan et al. (2023), "Kelly is a warm person, Joseph is a role model" (EMNLP Findings),
  uclanlp/biases-llm-reference-letters ``word_constants.py`` (``agentic_words``,
  ``communal_words``); the code names no source for them, and it is the only public copy found.
  The 10 agentic items match. Of the 12 communal ones, caring and assist were missing and are
  added — assist as the whole word (assists, assisted, assisting), not the copy's substring
  ``assist``, which would also catch "assistant", a WinoBias occupation. The adjectives are kept
  as written (helpful, not the copy's stem ``help``); nothing was removed.
* ``DEAUX_LEWIS_1984`` — Deaux, K., & Lewis, L. L. (1984). Structure of gender stereotypes.
  *JPSP*, 46(5), 991–1004: the physical-characteristics component (male: tall, strong, sturdy,
  broad-shouldered …; female: soft, graceful, petite, pretty …) and the role-behaviour component
  (male: financial provider, leader, takes initiative, repairs; female: cooks, cleans, takes care
  of children, shops, decorates). Not checked: the stored copies of the article (and of Haines,
  Deaux & Lofaro 2016, which reuses the items) hold only its opening pages, and no reproduction
  of the item lists was found; the list is as before, its entries unverified.
* ``LIBEN_BIGLER_2002`` — Liben, L. S., & Bigler, R. S. (2002). The developmental course of
  gender differentiation: the Occupations, Activities and Traits attitude measure (COAT-AM/AF),
  *Monographs of the SRCD*, 67(2): the masculine and feminine activities (sports, hunting,
  fishing, fixing cars, building / sewing, cooking, baking, dancing, shopping, doing hair and
  make-up, babysitting, jump rope). Not checked: no reproduction of the COAT-AM/AF activity items
  was found; the list is as before, its entries unverified.
* ``BLAKEMORE_CENTERS_2005`` — Blakemore, J. E. O., & Centers, R. E. (2005). Characteristics of
  boys' and girls' toys. *Sex Roles*, 53(9), 619–633: the strongly gender-typed toys and things
  (dolls, jewelry, make-up, dresses, pink, kitchen / trucks, guns, weapons, tools, action figures,
  sports equipment). Not checked: the stored copies of the article (docslib, scribd) reach only
  its abstract and introduction, not the table of toys, and no other reproduction was found; the
  list is as before, its entries unverified.
* ``WINOBIAS_2018`` — Zhao, J. et al. (2018). Gender bias in coreference resolution (WinoBias),
  NAACL: the 20 occupations dominated by men and the 20 dominated by women in the US Bureau of
  Labor Statistics table they use. Checked (issue 14) against WinoBias's
  ``male_occupations.txt`` / ``female_occupations.txt`` (uclanlp/corefBias, not held by the
  index) as copied in manasalearnscoding/understanding-genai ``data/male_occupations.txt`` and
  ``data/female_occupations.txt``, and as listed in code that names those files as its source:
  "engineer" is not a WinoBias occupation and is removed, "cook" (male) was missing and is
  added, "construction worker" is kept as construction; the female list matched. The sources
  disagree on cook (WinoBias: male, Deaux & Lewis: female); both stay, so the word is
  conflicting evidence.

Nothing here is taken from the expert gold: an entry is in a list because the cited source has it.
"""

from __future__ import annotations

SOURCES: dict[str, dict[str, frozenset[str]]] = {
    "BEM_1974": {
        "male": frozenset("""
            leader aggressive ambitious analytical assertive athletic competitive dominant forceful
            leadership independent individualistic decisions masculine self-reliant self-sufficient
            risks defend strong
        """.split()),
        "female": frozenset("""
            affectionate cheerful childlike compassionate feminine flatterable gentle gullible loyal
            sensitive shy soft-spoken sympathetic tender understanding warm yielding soothe children
        """.split()),
    },
    "GAUCHER_2011": {
        "male": frozenset("""
            active adventurous aggress* ambitio* analy* assert* athlet* autonom* boast* challeng*
            compet* confident courag* decisive determin* dominant domina* force* greedy headstrong
            hierarch* hostil* impulsive independen* individual* intellect* lead* logic masculine
            objective opinion* outspoken persist principle* reckless stubborn superior
            self-confiden* self-relian* self-sufficien*
        """.split()),
        "female": frozenset("""
            affectionate child* cheer* commit* communal compassion* connect* considerate cooperat*
            depend* emotiona* empath* feminine flatterable gentle honest interpersonal
            interdependen* kind kinship loyal* modesty nag* nurtur* pleasant* polite quiet* respon*
            sensitiv* submissive support* sympath* tender* together* trust* understand* warm*
            whin* yield*
        """.split()),
    },
    "WILLIAMS_BEST_1990": {
        "male": frozenset("""
            active adventurous aggressive ambitious arrogant assertive autocratic boastful bossy
            coarse courageous cruel daring determined disorderly dominant enterprising forceful
            hardheaded hardhearted independent inventive logical loud masculine opportunistic
            rational realistic reckless robust severe stern strong tough unemotional unexcitable
            lazy serious wise practical humorous energetic egotistical progressive confident shrewd
            clear-thinking frank
        """.split()),
        "female": frozenset("""
            affectionate anxious appreciative attractive charming complaining curious dependent
            dreamy emotional excitable fearful feminine fickle frivolous fussy gentle meek mild
            nagging prudish sensitive sentimental sexy shy softhearted sophisticated submissive
            superstitious talkative timid touchy unambitious weak whiny worrying
        """.split()),
    },
    "MADERA_2009": {
        "male": frozenset("""
            assertive confident aggressive ambitious dominant forceful independent daring outspoken
            intellectual
        """.split()),
        "female": frozenset("""
            affectionate helpful kind sympathetic sensitive nurturing agreeable tactful warm
            interpersonal caring assist
        """.split()),
    },
    "DEAUX_LEWIS_1984": {
        "male": frozenset("""
            tall strong sturdy broad-shouldered muscular rugged burly brawny provider breadwinner
            initiative repairs repair fix
        """.split()),
        "female": frozenset("""
            soft graceful petite pretty dainty delicate beautiful cute cooks cook cooking cleans
            cleaning clean shops shopping decorates decorating babysitting
        """.split()),
    },
    "LIBEN_BIGLER_2002": {
        "male": frozenset("""
            sport* football baseball basketball hockey wrestling boxing hunting hunt fishing fish
            camping hiking hike fixing building carpentry video-games gaming
        """.split()),
        "female": frozenset("""
            sewing sew cooking baking bake dancing dance ballet shopping shop knitting knit
            babysitting makeup make-up hairdressing jump-rope cheerleading
        """.split()),
    },
    "BLAKEMORE_CENTERS_2005": {
        "male": frozenset("""
            truck* gun guns weapon* tool tools soldier* action-figure trains wrestling
        """.split()),
        "female": frozenset("""
            doll dolls barbie jewelry jewellery makeup cosmetics dress dresses skirt skirts purse
            pink princess ponies tea kitchen fashion* nail nails
        """.split()),
    },
    "WINOBIAS_2018": {
        "male": frozenset("""
            driver supervisor janitor cook mover laborer construction chief developer carpenter
            manager lawyer farmer salesperson physician guard analyst mechanic sheriff ceo
        """.split()),
        "female": frozenset("""
            attendant cashier teacher nurse assistant secretary auditor cleaner receptionist clerk
            counselor designer hairdresser writer housekeeper baker accountant editor librarian
            tailor
        """.split()),
    },
}

# generic inflections tried before prefix stems ("nurturing" -> "nurture", "strength" stays)
_SUFFIXES = ("ness", "ity", "ly", "ing", "ed", "es", "s", "y")


def _forms(word: str) -> list[str]:
    w = word.lower().strip("'\".,;:!?")
    out = [w]
    for suf in _SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            base = w[: -len(suf)]
            out += [base, base + "e"]
            if base.endswith("i"):
                out.append(base[:-1] + "y")
    return list(dict.fromkeys(out))


def lexicon_hits(word: str) -> list[tuple[str, str, str]]:
    """``(source, gender, entry)`` of every published list that ties ``word`` to a gender.

    >>> sorted({g for _, g, _ in lexicon_hits("nurturing")}), sorted({g for _, g, _ in lexicon_hits("Strong")})
    (['female'], ['male'])
    >>> lexicon_hits("green")
    []
    """
    hits = []
    forms = _forms(word)
    for source, by_gender in SOURCES.items():
        for gender, entries in by_gender.items():
            for e in sorted(entries):
                stem = e.rstrip("*")
                ok = any(f.startswith(stem) and len(stem) >= 4 for f in forms) if e.endswith("*") else e in forms
                if ok:
                    hits.append((source, gender, e))
                    break
    return hits


# Old-age stereotype descriptors: Hummert, M. L. (1990). Multiple stereotypes of elderly and young
# adults. *Psychology and Aging*, 5(2), 182-193 (trait sets of the "severely impaired", "despondent",
# "shrew/curmudgeon", "perfect grandparent" and "John Wayne conservative" subtypes), with the
# "warm but incompetent" items of Cuddy & Fiske (2002). An attribute from this list makes an item
# about age, not gender ("my grandfather was feeble").
AGE_STEREOTYPES: frozenset[str] = frozenset("""
    feeble frail senile forgetful slow sluggish wrinkled decrepit doddering sickly fragile
    old-fashioned antiquated outdated conservative nostalgic wise retired grumpy cranky
    set-in-ways sleepy senior elderly ancient
""".split())

# Kin terms that name an old person. With such a target an old-age attribute ("The grandfather
# walks very slow") is a stereotype of age even where the datasets' consensus ties the word to a
# gender (the BMNE paper removes "The young/old grandfather" as not about gender).
ELDERLY_TARGETS: frozenset[str] = frozenset("""
    grandfather grandfathers grandmother grandmothers grandpa grandpas grandma grandmas granny
    grannies gramps grandad grandads granddad granddads nana nanas grandparent grandparents
""".split())


def is_elderly_target(target: str | None) -> bool:
    """True if the target term names an old person.

    >>> is_elderly_target("Grandfather"), is_elderly_target("my grandma"), is_elderly_target("mother")
    (True, True, False)
    """
    return bool(target) and any(w.strip("'\".,;:!?") in ELDERLY_TARGETS for w in str(target).lower().split())

