"""report.json: the full results and provenance, machine-readable, deterministic (sorted keys)."""

from __future__ import annotations

import json
import math
from typing import Any

from stereoset_eval.analysis.report_model import Report


def _clean(obj: Any) -> Any:
    """NaN/inf become None (JSON has no NaN); tuples become lists."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalars
        return _clean(obj.item())
    return obj


def report_to_json(report: Report) -> str:
    """The report as JSON text: sorted keys, 2-space indent, trailing newline."""
    return json.dumps(_clean(report.to_dict()), indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
