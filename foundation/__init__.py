"""The foundation every layer stands on: items, errors, atomic files, file checksums, provenance.

Nothing here imports curation, scoring, analysis or torch.
"""
