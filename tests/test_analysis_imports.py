"""The analysis layer imports without torch (metrics take scores, never models)."""

from __future__ import annotations

import subprocess
import sys

MODULES = [
    "stereoset_eval.analysis.stereoset_metrics",
    "stereoset_eval.analysis.stereoset_micro",
    "stereoset_eval.analysis.crows_metric",
    "stereoset_eval.analysis.pair_metrics",
    "stereoset_eval.analysis.correlation",
    "stereoset_eval.analysis.bootstrap",
    "stereoset_eval.foundation.score_file",
    "stereoset_eval.analysis.statistics",
    "stereoset_eval.analysis.benchmarks",
    "stereoset_eval.foundation.provenance",
    "stereoset_eval.analysis.report_build",
    "stereoset_eval.analysis.report_writer",
    "stereoset_eval.cli.commands.report",
    "stereoset_eval.cli.commands.evaluate_predictions",
]


def test_analysis_imports_without_torch():
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in MODULES)
        + ("bad = [m for m in ('torch', 'transformers') if m in sys.modules]\n" "assert not bad, bad\n")
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_the_command_line_starts_without_scipy_stats_or_matplotlib():
    """Every command's parser is built at start; scipy.stats and matplotlib (~1.3 s of imports
    between them) are imported only by the code that computes a ρ or draws a plot."""
    code = (
        "import sys\n"
        "from stereoset_eval.cli.main import build_parser\n"
        "build_parser()\n"
        "bad = [m for m in ('scipy.stats', 'matplotlib', 'torch') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
