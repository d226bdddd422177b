"""Speed benchmark of the scoring methods: ours vs the reference loop, minicons and the floor.

Run it with ``python -m benchmarks.run`` (or ``make bench``); see :mod:`benchmarks.run`.

Layout:

* :mod:`benchmarks.specs` — the models, methods, datasets and agreement tolerances benchmarked;
* :mod:`benchmarks.models` — fixture models and the random-init BERT-base / GPT-2-small
  sized models (built once, cached; random weights are legitimate here only because this is
  timing);
* :mod:`benchmarks.inputs` — the CrowS-Pairs and StereoSet intrasentence slices;
* :mod:`benchmarks.impls` — the implementations timed (``ours``, ``reference-loop``,
  ``minicons``, ``floor``), each a prepare / run / scores triple so only ``run`` is timed;
* :mod:`benchmarks.measure` — warm-up, repeated timing (wall and process CPU), peak RSS;
* :mod:`benchmarks.cell` — one (model, method, implementation) measurement, in-process or in a
  child process (``python -m benchmarks.cell``) so peak RSS is per implementation;
* :mod:`benchmarks.report` — ratios, agreement (max |Δ|), targets, the Markdown table and JSON.
"""
