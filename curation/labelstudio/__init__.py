"""Label Studio round trip: review curated pairs in Label Studio and fold decisions back.

Steps, one module each (items in and out: :mod:`~stereoset_eval.curation.labelstudio.items_io`, which
reads ``curate`` folders, pairs CSV/parquet and items JSON lines):

* :mod:`~stereoset_eval.curation.labelstudio.pitfalls` — the checkbox catalogue from the rule registry;
* :mod:`~stereoset_eval.curation.labelstudio.config`   — the labeling config XML (+ offline validation);
* :mod:`~stereoset_eval.curation.labelstudio.tasks`    — items -> tasks with predictions, tasks JSON file;
* :mod:`~stereoset_eval.curation.labelstudio.server`   — push tasks / pull an export with the SDK;
* :mod:`~stereoset_eval.curation.labelstudio.annotations` — full JSON export -> annotations + issues;
* :mod:`~stereoset_eval.curation.labelstudio.merge`    — human decisions -> curated items, removed table;
* :mod:`~stereoset_eval.curation.labelstudio.human_edits` — a person's word substitutions as token edits;
* :mod:`~stereoset_eval.curation.labelstudio.agreement` — Cohen's kappa per field and annotator pair;
* :mod:`~stereoset_eval.curation.labelstudio.report`   — review report and output files;
* :mod:`~stereoset_eval.curation.labelstudio.version`  — the reviewed version, written like ``curate``'s.

Only ``server`` and the validation helpers need ``label-studio-sdk`` (imported lazily).
"""
