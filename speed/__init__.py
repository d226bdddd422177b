"""Speed benchmark of the scoring methods: ours vs the reference loop, minicons and the floor.

Run it with ``python -m speed.run`` (or ``make bench``); see :mod:`speed.run`.

Layout:

* :mod:`speed.specs` — the models, methods, datasets and agreement tolerances benchmarked;
* :mod:`speed.models` — fixture models and the random-init BERT-base / GPT-2-small
  sized models (built once, cached; random weights are legitimate here only because this is
  timing);
* :mod:`speed.inputs` — the CrowS-Pairs and StereoSet intrasentence slices;
* :mod:`speed.impls` — the implementations timed (``ours``, ``reference-loop``,
  ``minicons``, ``floor``), each a prepare / run / scores triple so only ``run`` is timed;
* :mod:`speed.measure` — warm-up, repeated timing (wall and process CPU), peak RSS;
* :mod:`speed.cell` — one (model, method, implementation) measurement, in-process or in a
  child process (``python -m speed.cell``) so peak RSS is per implementation;
* :mod:`speed.report` — ratios, agreement (max |Δ|), targets, the Markdown table and JSON.
"""
