"""Measured-versus-predicted comparisons on data shipped in ``data/``; never imported by models."""
