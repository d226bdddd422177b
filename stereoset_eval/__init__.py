"""stereoset-eval: load, curate, score and analyse stereotype-bias benchmarks.

One import namespace; its layers (dependencies flow one way, upward imports are a test failure):

* :mod:`stereoset_eval.foundation` — the item model, errors, atomic files, provenance;
* :mod:`stereoset_eval.curation` — loaders, pitfall rules, gender swaps, dimension tags, Label Studio;
* :mod:`stereoset_eval.scoring` — language-model scores, faithful to the reference code;
* :mod:`stereoset_eval.analysis` — metrics, bootstrap, correlation, reports;
* :mod:`stereoset_eval.study` — many models over many benchmarks, one report;
* :mod:`stereoset_eval.cli` — the ``stereoset-eval`` command line.
"""

__version__ = "0.1.0"
