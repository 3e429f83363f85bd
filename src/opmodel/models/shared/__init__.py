"""Machinery shared by several models (never a model of its own)."""
