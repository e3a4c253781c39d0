"""Small Sphinx fixes for Jupyter Book 1.x, so that every page loads without console errors.

* sphinx-thebe 0.3.1 registers its inline configuration script (``const
  THEBE_JS_URL = …``) twice under Jupyter Book; the second copy throws
  "Identifier 'THEBE_JS_URL' has already been declared".  Duplicate script
  entries are dropped from each page's context before it is written (the
  same happens to sphinx-togglebutton's inline script).
* Sphinx adds MathJax only to pages that contain maths of their own, but the
  navigation sidebar of every page shows the chapter titles, some of which
  carry maths (``the rank-$R$ form``).  The HTML assets policy "always" loads
  MathJax on every page, so those titles are typeset everywhere.
* sphinxext-opengraph takes a page's description from its text, in which maths
  is raw TeX (``q_j \\leftrightarrow k_j``); a link preview shows plain text, so
  the TeX of the description tags is written as text (``q_j ↔ k_j``).
"""

from __future__ import annotations

import re

#: TeX commands of the book's opening paragraphs, as the characters a preview shows.
_TEX_SYMBOLS = {
    "leftrightarrow": "↔",
    "to": "→",
    "sigma": "σ",
    "alpha": "α",
    "lambda": "λ",
    "eta": "η",
    "odot": "⊙",
    "sum": "Σ",
    "big": "",
    "Big": "",
    "left": "",
    "right": "",
    "top": "ᵀ",
    "mathbb": "",
    "mathrm": "",
    "operatorname": "",
}
_DESCRIPTION = re.compile(r'(<meta (?:property="og:description"|name="description") content=")([^"]*)(")')


def _plain(text: str) -> str:
    """``text`` with its TeX commands as characters (unknown ones dropped) and no braces or doubled spaces."""
    text = re.sub(r"\\([A-Za-z]+|[,;:!])", lambda m: " " + _TEX_SYMBOLS.get(m.group(1), "") + " ", text)
    return re.sub(r"\s+", " ", text.replace("{", "").replace("}", "")).replace(" ,", ",").strip()


def _plain_descriptions(app, pagename, templatename, context, doctree):
    tags = context.get("metatags")
    if tags:
        context["metatags"] = _DESCRIPTION.sub(lambda m: m.group(1) + _plain(m.group(2)) + m.group(3), tags)


def _dedupe_scripts(app, pagename, templatename, context, doctree):
    files = context.get("script_files")
    if not files:
        return
    seen, unique = set(), []
    for js in files:
        # the two copies differ only in filename None versus ""
        name = getattr(js, "filename", js) or ""
        key = (str(name), tuple(sorted((k, str(v)) for k, v in getattr(js, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(js)
    context["script_files"] = unique


def setup(app):
    app.set_html_assets_policy("always")
    # late, after every extension has added its scripts for the page
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    # after sphinxext-opengraph (priority 500) has added the description tags
    app.connect("html-page-context", _plain_descriptions, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
