"""The published StereoSet dev numbers (Nadeem et al. 2021), shown beside ours when they are comparable.

The bundled file ``data/bundled/stereoset_dev_scores_nadeem2021.json`` holds the official dev
scores per model id. A number is comparable only for the same model id, the official variant,
the method of StereoSet's own code for every task in the slice and the full dev split.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

#: methods that follow StereoSet's own code, per task (the published numbers are theirs)
OFFICIAL_METHODS: dict[str, frozenset[str]] = {
    "intrasentence": frozenset({"stereoset-mlm", "stereoset-causal"}),
    "intersentence": frozenset({"stereoset-nsp", "stereoset-inter-causal"}),
}
REFERENCE_FILE = "bundled/stereoset_dev_scores_nadeem2021.json"
REFERENCE_KEYS = {"lms": "LM Score", "ss": "SS Score", "icat": "ICAT Score"}
REFERENCE_SOURCE = "Nadeem et al. 2021 (dev)"
STEREOSET_DEV_EXAMPLES = {"intrasentence": 2106, "intersentence": 2123}


@lru_cache(maxsize=1)
def reference_scores() -> dict[str, Any]:
    """The official StereoSet dev scores per model (empty when the file is not installed)."""
    path = resources.files("stereoset_eval.data").joinpath(REFERENCE_FILE)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, OSError):
        return {}


def published(model_id: str, method: str | None, task: str, metric: str, n: int | None, variant: str) -> float | None:
    """The published number for this model, task (``overall``: both) and metric; None unless all match."""
    ref = reference_scores().get(model_id)
    tasks = tuple(OFFICIAL_METHODS) if task == "overall" else (task,)
    if ref is None or variant != "official" or any(t not in OFFICIAL_METHODS for t in tasks):
        return None
    if n != sum(STEREOSET_DEV_EXAMPLES[t] for t in tasks):  # the full dev split only
        return None
    used = set((method or "").split(", "))
    if not all(used & OFFICIAL_METHODS[t] for t in tasks):
        return None
    block = ref.get("overall") if task == "overall" else (ref.get(task) or {}).get("overall")
    value = (block or {}).get(REFERENCE_KEYS[metric])
    return float(value) if value is not None else None
