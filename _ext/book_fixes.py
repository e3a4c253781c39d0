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
"""

from __future__ import annotations


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
    return {"parallel_read_safe": True, "parallel_write_safe": True}
