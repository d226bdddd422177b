"""Words: the BMNE paper (Zakizadeh & Pilehvar 2025) is "the BMNE paper", never "the seed paper".

A random seed stays a seed; only the paper's old nickname is caught.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FOLDERS = ("stereoset_eval", "foundation", "curation", "scoring", "analysis", "study", "cli", "data", "speed", "docs",
           "tests")
NICKNAME = re.compile(r"seed[- ]paper|seed recipe|BMNE seed|seed (dataset|curation|release)", re.IGNORECASE)


def test_no_file_calls_the_bmne_paper_a_seed():
    files = [REPO / "README.md"] + [p for f in FOLDERS for p in (REPO / f).rglob("*")
                                    if p.suffix in (".py", ".md", ".toml", ".json") and p.is_file()]
    me = Path(__file__).resolve()
    hits = [f"{p.relative_to(REPO)}:{n}: {line.strip()}" for p in files if p.resolve() != me
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1) if NICKNAME.search(line)]
    assert not hits, "say 'the BMNE paper':\n" + "\n".join(hits)
