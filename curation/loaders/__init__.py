"""Loaders: raw benchmark files in, :class:`stereoset_eval.foundation.items.Item` lists out."""
