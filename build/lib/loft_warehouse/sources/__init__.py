"""Loaders that read one source format each and return documents and queries."""
