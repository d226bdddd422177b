"""The registry of scoring methods: ``METHODS`` (name -> :class:`~stereoset_eval.scoring.methods.base.Method`).

=========================  =======  ==========================================================
name                       model    number per sentence
=========================  =======  ==========================================================
stereoset-mlm              masked   mean probability of the attribute word's pieces (StereoSet)
stereoset-causal           causal   geometric-mean token probability (StereoSet intrasentence)
stereoset-nsp              nsp      P(IsNext | context, sentence) (StereoSet intersentence)
stereoset-inter-causal     causal   mean log2 p(sentence) / mean log2 p(context) (StereoSet)
crows-nangia               masked   summed log p of the pair's shared tokens, rounded (CrowS)
pll                        masked   pseudo-log-likelihood (Salazar et al. 2020)
pll-word-l2r               masked   PLL with within-word left-to-right masking (Kauf & Ivanova)
causal-ll                  causal   summed log-likelihood after the BOS token (lm-eval)
=========================  =======  ==========================================================
"""

from __future__ import annotations

from stereoset_eval.foundation.registry import Registry
from stereoset_eval.scoring.methods import causal_ll, crows, pll, stereoset_causal, stereoset_mlm, stereoset_nsp
from stereoset_eval.scoring.methods.base import Method

METHODS: Registry[Method] = Registry("scoring method")
for _m in (
        stereoset_mlm.METHOD,
        stereoset_causal.INTRA_METHOD,
        stereoset_nsp.METHOD,
        stereoset_causal.INTER_METHOD,
        crows.METHOD,
        pll.PLL_METHOD,
        pll.PLL_WORD_METHOD,
        causal_ll.METHOD,
):
    METHODS.add(_m.name, _m)


def get_method(name: str) -> Method:
    """The method called ``name``; :class:`UnknownNameError` (with a suggestion) otherwise."""
    return METHODS[name]


__all__ = ["METHODS", "Method", "get_method"]
