"""The analysis layer imports without torch (metrics take scores, never models)."""

from __future__ import annotations

import subprocess
import sys

MODULES = [
    "analysis.stereoset_metrics",
    "analysis.stereoset_micro",
    "analysis.crows_metric",
    "analysis.pair_metrics",
    "analysis.correlation",
    "analysis.bootstrap",
    "analysis.predictions_io",
    "analysis.provenance",
    "analysis.report_build",
    "analysis.report_writer",
    "analysis.commands.report",
    "analysis.commands.evaluate_predictions",
]


def test_analysis_imports_without_torch():
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in MODULES)
        + ("bad = [m for m in ('torch', 'transformers') if m in sys.modules]\n" "assert not bad, bad\n")
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
