"""Label Studio round trip: review curated pairs in Label Studio and fold decisions back.

Steps, one module each (items in and out: :mod:`~curation.labelstudio.items_io`, which
reads ``curate`` folders, pairs CSV/parquet and items JSON lines):

* :mod:`~curation.labelstudio.pitfalls` — the checkbox catalogue from the rule registry;
* :mod:`~curation.labelstudio.config`   — the labeling config XML (+ offline validation);
* :mod:`~curation.labelstudio.tasks`    — items -> tasks with predictions, tasks JSON file;
* :mod:`~curation.labelstudio.server`   — push tasks / pull an export with the SDK;
* :mod:`~curation.labelstudio.annotations` — full JSON export -> annotations + issues;
* :mod:`~curation.labelstudio.merge`    — human decisions -> curated items, removed table;
* :mod:`~curation.labelstudio.human_edits` — a person's word substitutions as token edits;
* :mod:`~curation.labelstudio.agreement` — Cohen's kappa per field and annotator pair;
* :mod:`~curation.labelstudio.report`   — review report and output files;
* :mod:`~curation.labelstudio.version`  — the reviewed version, written like ``curate``'s.

Only ``server`` and the validation helpers need ``label-studio-sdk`` (imported lazily).
"""
