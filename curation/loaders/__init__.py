"""Loaders: raw benchmark files in, :class:`curation.items.Item` lists out."""
