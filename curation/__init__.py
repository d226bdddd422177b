"""stereoset-eval curation: the item model, loaders, pitfall rules, swaps, tags, Label Studio."""

__version__ = "0.1.0"
