"""The claims-to-evidence index, ``book/evidence.md``, written at every build by ``symbreak.evidence.render``.

At ``builder-inited`` the page is written when its text differs from what the notebooks and tests give now, so the
index is never stale in a built book; ``tests/test_evidence.py`` checks that the committed page is the generated one.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "evidence.md"


def _write_page(app) -> None:
    from symbreak.evidence import render

    text = render(ROOT)
    if not PAGE.exists() or PAGE.read_text(encoding="utf-8") != text:
        PAGE.write_text(text, encoding="utf-8")


def setup(app):
    app.connect("builder-inited", _write_page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
