"""The dataset card (README.md) of a curated version, generated from the run's result.

Everything on the card comes from the result (counts, statistics, rule table, provenance);
the prose states the definitions a reader needs to reuse the numbers (tokenisation of the
statistics, direction convention, dimension tie order) and the license.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

BMNE_REFERENCE = {"stereoset-intra": 223, "crows-pairs": 186}


def _md(df: pd.DataFrame, floatfmt: str = ".4f") -> str:
    """A GitHub markdown table (no extra dependency)."""
    cols = list(df.columns)

    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return format(v, floatfmt)
        return str(v).replace("|", "\\|")

    lines = ["| " + " | ".join(cols) + " |", "| " + " | ".join("---" for _ in cols) + " |"]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def _coverage_section(result: Any) -> str:
    """Coverage, estimated precision and the reliability of every rule the run used."""
    if not hasattr(result, "coverage"):
        return ""
    prov = result.provenance
    routing = prov.get("routing", {})
    rows = []
    for ds, c in result.coverage().items():
        rows.append({"dataset": ds, "items": c["items"], "reviewed": c["reviewed"], "automatic": c["automatic"],
                     "need review": c["needs_review"], "coverage": c["coverage"],
                     "est. item": c["estimated_item"], "est. instance": c["estimated_instance"],
                     "est. pair text": c["estimated_text"], "est. dimension": c["estimated_dimension"]})
    cov = _md(pd.DataFrame(rows)) if rows else "(no items)"
    rel = result.reliability_table()
    reviewed = prov.get("reviewed_inputs") or []
    src = ", ".join(f"`{r['file']}`" for r in reviewed) or "none"
    measured = rel[rel["lower"].notna()] if len(rel) else rel
    rel_md = _md(measured.drop(columns=["family_n", "family_mean"])) if len(measured) else \
        "No reliability is measured: no reviewed items were given. Mechanical rules decide; judgement rules send their items to review."
    return f"""## Coverage and estimated precision

Coverage is the share of the items no person reviewed that the rules decided alone; `est.` is the
estimated agreement of those automatic decisions with a person (posterior means of their rules'
reliability, weighted per decision). An item is decided automatically only when no rule holds it and
every rule on it has a reliability lower bound (one-sided {routing.get('confidence', 0.95)}) of at
least `min_precision` = {routing.get('min_precision', 0.95)}; unmeasured rules: {routing.get('unmeasured', 'mechanical')}.
Reviewed items: {src} ({prov.get('reviewed_items', 0)} items).

{cov}

### Reliability of the rules (from the reviewed items)

`n` decisions graded against a person, `agree` of them agreeing; `mean` and `lower` are the Beta
posterior's mean and lower bound (prior: a mechanical rule {routing.get('mechanical_prior', 0.99)} with
strength {routing.get('mechanical_prior_strength', 20.0)}; a judgement rule its family's pooled agreement
with strength {routing.get('prior_strength', 10.0)}). A dimension rule is estimated per label.

{rel_md}"""


def dataset_card(result: Any, *, version: str, human_review: str | None = None, gold: str | None = None) -> str:
    """Markdown card for ``result`` (a :class:`~stereoset_eval.curation.pipeline.CurationResult`).

    ``human_review`` is a markdown section on the human review of this version
    (:func:`stereoset_eval.curation.labelstudio.report.report_markdown`), placed before the provenance;
    ``gold`` is the agreement section of :func:`stereoset_eval.curation.gold_report.gold_markdown`.
    """
    prov = result.provenance
    removed = result.removed_table()
    inputs = "\n".join(
        f"- `{i['file']}` ({i['benchmark']}), sha256 `{i['sha256']}`, {i['items_loaded']} items loaded"
        for i in prov["inputs"]
    ) or "- (items passed in memory)"
    bmne = "\n".join(
        f"- {src}: {int(row['curated'])} curated pairs here vs {BMNE_REFERENCE[src]} in the BMNE release"
        for src, row in result.counts.set_index("source").iterrows() if src in BMNE_REFERENCE
    )
    summary = result.rule_summary.drop(columns=["severity"])
    priority = " > ".join(prov["config"]["dimension_priority"])
    status_counts = removed["status"].value_counts().to_dict() if len(removed) else {}
    decided = result.decided_counts() if hasattr(result, "decided_counts") else {"automatic": 0, "review": 0}
    decided.setdefault("reviewed", 0)
    kind = "Human-reviewed curation" if human_review or prov.get("output_kind") == "human-reviewed curation" \
        else "Automatic curation"
    return f"""---
license: cc-by-sa-4.0
language:
- en
pretty_name: stereoset-eval curated gender pairs ({version})
task_categories:
- text-classification
tags:
- stereotype
- bias
- gender
configs:
- config_name: default
  data_files:
  - split: train
    path: pairs.parquet
---

# Curated gender-swap pairs — version `{version}` ({kind.lower()})

**{kind}.** Of the source items, {decided['automatic']} were decided automatically (every rule on the item
at or above the precision the run asked for), {decided['reviewed']} were decided by a person (reviewed items
given to the run, `decided_by = review`), and {decided['review']} need a person: they have no rows here and
wait in `review_items.jsonl` with the suggestion and its evidence (`stereoset-eval annotate push --items`).
{'A human review has been merged (see below).' if human_review else 'This is an automatic curation until the reviews of every waiting item are merged.'}

{_coverage_section(result)}

Minimal pairs built from the gender items of StereoSet (intrasentence) and CrowS-Pairs by
`stereoset-eval curate`, following the curation recipe of Zakizadeh & Pilehvar (2025),
"Blind Men and the Elephant" (§3, §5): harmonised pair format, pitfall rules, gender-swap
normalisation (one instance per attribute), stereotype-dimension tags.

## Columns

`sent_more` (the stereotypical sentence), `sent_less`, `stereo_antistereo`, `bias_type`,
`category` (stereotype dimension; empty = needs annotation) — the BMNE schema — plus
provenance: `id`, `source`, `source_id`, `instance` (as-is / sent_more attribute /
sent_less attribute), `target` (StereoSet target term), `pitfalls`, `tag_source`
(auto/human), `dimension_evidence`, `edits` (JSON list of token edits
`sentence_role, index, old, new` over the lossless tokenisation of `stereoset_eval.curation.text`; applying
them in reverse rebuilds the source sentence), `sentence_origins` (which source sentence
each sentence was made from), `item_flags` (JSON), `source_file`, `source_sha256`, `source_row`
(integer), `source_format`. The columns have the same types in `pairs.csv`, `pairs.parquet` and
`hf_dataset/` (a `DatasetDict` with one split, `train`): strings, `source_row` an integer; an
absent `category`, `target`, `tag_source` or `source_row` is null (an empty field in CSV);
`dimension_evidence`, `edits`, `sentence_origins` and `item_flags` are JSON text.

Load it with `datasets.load_dataset("<this folder>")` (the `configs:` block above points at
`pairs.parquet`), `datasets.load_from_disk("<this folder>/hf_dataset")`, or pandas. Score it
with lm-evaluation-harness: `lm_eval --include_path <this folder>/lm_eval_task --tasks
stereoset_eval_curated` (`target_delimiter: ""`, as lm-eval's own `crows_pairs`).

Direction: `sent_more` is always the stereotype-consistent sentence (as in CrowS-Pairs,
whose metric counts `sent_more` > `sent_less` for both directions). `stereo_antistereo`
follows CrowS-Pairs: a normalised instance built from the anti-stereotypical attribute has
`sent_more` about the other gender, so its direction is flipped (StereoSet: stereotype
option → `stereo`, anti-stereotype option → `antistereo`). The BMNE release writes
`stereo` everywhere; map all to `stereo` to reproduce that.

## Counts

{_md(result.counts)}

Left out: {len(removed)} pairs or instances ({', '.join(f'{v} {k}' for k, v in sorted(status_counts.items())) or 'none'});
every one is listed in `removed.csv` with its rule and reason.

Sentences that start with a formula character (`=`, `+`, `-`, `@`): {sum(any(f.rule == "formula_start" for f in it.flags) for it in result.items)} curated pairs
(flag `formula_start` in `item_flags`). `pairs.csv` writes such a cell with a leading apostrophe
(`'=…`) so a spreadsheet shows text; `pairs.parquet`, `hf_dataset/` and JSON keep the exact text,
and `stereoset-eval` reads `pairs.csv` back as the exact text.

Comparison with the BMNE release (which also applied human judgement, {'applied here: see the human review below' if human_review else 'not yet applied here'}):
{bmne or '- (no BMNE source in this run)'}

## Stereotype dimensions

Suggested from lexicons (attribute words first, then the rest of `sent_more`); ties:
{priority} (Physical Characteristics last: a body word usually serves the role or judgement
the stereotype is about, so it wins only alone). Human tags (Label Studio) override them.

{_md(result.categories)}

![categories](statistics/categories.png)

## Statistics

Words = `len(text.split())`, characters = `len(text)`; std is the sample std (ddof=1).

{_md(result.lengths, '.2f')}

Jaccard similarity of word sets (`stereoset_eval.curation.text.words`: lower-cased word tokens,
punctuation dropped) between each curated sentence and the source sentence it was made
from: over edited sentences only (`mean_jaccard_edited`) and over all curated sentences,
unedited ones counting 1.0 (`mean_jaccard_all`). The BMNE paper reports 83.45%.

{_md(result.jaccard)}

## Rules (one registry)

Every decision is owned by a rule of the registry: `kind` is `mechanical` (a check of form, right by
construction) or `judgement` (a reading of meaning, trusted only as far as reviewed items show);
`effect` is what it does (remove, drop an instance, keep, swap labels, repair, tag a dimension, hold =
a person decides); `stage` is where it decides (`review`: pitfalls a person sets, Blodgett et al.
2021). `flagged` counts flags on the source pairs, `decisions` the decisions of this run;
`reliability_*` are the estimates from the reviewed items. Rule failures (exceptions) in this run:
{prov['rule_failures']}.

{_md(summary)}

{human_review.strip() + chr(10) + chr(10) if human_review else ''}{gold.strip() + chr(10) + chr(10) if gold else ''}## Provenance

- tool: stereoset-eval {prov['tool_version']}; rules version {prov['rules_version']};
  lexicon sha256 `{prov['lexicon_sha256']}`
- configuration: `{prov['config']}`
- inputs:
{inputs}
- out of scope (source/bias type: items): {prov['out_of_scope'] or 'none'}

## License

CC BY-SA 4.0, as StereoSet (Nadeem et al. 2021) and CrowS-Pairs (Nangia et al. 2020), from
which every sentence is derived (ShareAlike applies).
"""

