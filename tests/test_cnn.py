"""Focused tests of the CNN ops (see docs/kernels.md, "CNN ops")."""
