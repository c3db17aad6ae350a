"""FooStructured.h: the helpers torchgen's structured wrappers call (structured.py)."""

from __future__ import annotations

from . import structured
from .render import render, stamp
from .resolve import Plan


def gen_structured_header(plan: Plan) -> str:
    return render("FooStructured.h.j2", stamp=stamp(plan.manifest_path), helpers=structured.helpers())
