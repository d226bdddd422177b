"""Closed-class English words: the cues of the ``her`` → ``his``/``him`` decision.

``her`` is an object pronoun (→ ``him``) when the next word cannot start the noun phrase
it would determine: a determiner, preposition, conjunction, pronoun, auxiliary, adverb,
particle or a verb in base form ("told her the story", "asked her to", "made her leave").
Otherwise it is a possessive determiner (→ ``his``: "her school", "her crying daughter").
"""

from __future__ import annotations

DETERMINERS = frozenset("""
a an the this that these those my your his her its our their some any every each no
another either neither much many few several all both such what which whose
""".split())

PREPOSITIONS = frozenset("""
about above across after against along among around as at before behind below beneath
beside besides between beyond by despite down during except for from in inside into like
near of off on onto out outside over past since than through throughout till to toward
towards under underneath until up upon with within without
""".split())

CONJUNCTIONS = frozenset("""
and but or nor so yet because although though while whereas if unless when whenever
where wherever whether once then
""".split())

PRONOUNS = frozenset("""
i me you he him she it we us they them myself yourself himself herself itself ourselves
themselves who whom someone something anyone anything everyone everything nobody nothing
""".split())

AUXILIARIES = frozenset("""
am is are was were be been being have has had do does did will would shall should can
could may might must isn't aren't wasn't weren't don't doesn't didn't won't wouldn't
can't couldn't shouldn't
""".split())

ADVERBS = frozenset("""
not never always often sometimes again too very so quite rather just only even also
still already back away home here there now today tonight tomorrow yesterday later
soon once twice ever anyway alone together everywhere somewhere backstage upstairs
downstairs abroad overseas
""".split())

# verbs in base form that follow an object pronoun ("made her leave", "let her go")
BASE_VERBS = frozenset("""
be go leave stay do make feel find get give take come see know think want try help
change cry smile laugh sing dance win lose stop start run walk fall sleep eat drink
speak talk sit stand wait work play read write learn decide
""".split())

# words after "her" that mark the determiner reading even though closed-class
POSSESSIVE_CUES = frozenset({"own"})

# "-ly" words that are nouns or adjectives, not adverbs
LY_NON_ADVERBS = frozenset("""
family belly bully ally lily jelly rally tally folly holly lovely friendly ugly elderly
early lonely silly holy only daily costly curly kindly lively likely deadly homely
motherly fatherly sisterly brotherly manly womanly
""".split())

OBJECT_CUES = DETERMINERS | PREPOSITIONS | CONJUNCTIONS | PRONOUNS | AUXILIARIES | ADVERBS

# frequent adjectives that complement an object ("made her sick", "kept her busy")
COMMON_ADJECTIVES = frozenset("""
sick ill happy sad upset angry mad crazy tired nervous comfortable uncomfortable proud
jealous safe alive dead free busy ready late awake asleep alone wet dry warm cold hot
""".split())
