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
* Sphinx's search writes a result's snippet from the page's text, in which maths
  is raw TeX too.  Every formula carries its text as ``data-plain``, and
  ``_static/search_plain.js`` puts it in place of the TeX before the snippet is cut.
* A figure's image has its file name as alt text; it gets its caption's first
  sentence instead, so that a screen reader says what the figure shows.
* docutils marks the entries of a bibliography ``role="doc-biblioentry"`` inside a
  ``role="list"``; they become ``role="listitem"``, as a list's children must be.
* A numbered reference, "Fig. 6.2", "Table 8.3", "Theorem 6.1", could end a line
  after its word in the HTML; its space is a no-break space there (TeX does not
  break a reference's ``~`` in the PDF).
* A code line too long for a phone wraps (``_static/book.css``); its continuation
  started at column 0, where it read as a new line.  The highlighter writes each
  line of a code block or output in a span of its own, with its indentation, to
  which the CSS gives a hanging indent (:func:`hanging_lines`).
* Sphinx 7.4 unpickles the target page's doctree for every ``numref`` it resolves
  (``StandardDomain._resolve_numref_xref`` calls ``env.get_doctree``): about 250
  times a build, 20 s of each of the HTML and the PDF build.  The stored doctrees do
  not change while the pages are written, so there each is unpickled once.
"""

from __future__ import annotations

import html
import re

#: TeX commands of the book's maths as the characters a preview or a search snippet shows (others are dropped).
_TEX_SYMBOLS = {
    **dict.fromkeys(["big", "Big", "bigl", "bigr", "left", "right", "mathbb", "mathrm", "mathcal", "mathbf"], ""),
    **dict.fromkeys(["operatorname", "text", "frac", "tfrac", "dfrac", "square", "boxed", "displaystyle"], ""),
    **{"leftrightarrow": "↔", "sim": "∼", "to": "→", "mapsto": "↦", "top": "ᵀ", "cdot": "·", "times": "×", "odot": "⊙"},
    **{"sigma": "σ", "alpha": "α", "beta": "β", "gamma": "γ", "lambda": "λ", "eta": "η", "mu": "μ", "theta": "θ"},
    **{"kappa": "κ", "xi": "ξ", "tau": "τ", "pi": "π", "varphi": "φ", "phi": "φ", "Phi": "Φ", "Delta": "Δ"},
    **{"varepsilon": "ε", "epsilon": "ε", "rho": "ρ", "omega": "ω", "nabla": "∇", "partial": "∂", "infty": "∞"},
    **{"sum": "Σ", "prod": "Π", "sqrt": "√", "in": "∈", "neq": "≠", "ne": "≠", "equiv": "≡", "approx": "≈"},
    **{"le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "pm": "±", "dots": "…", "ldots": "…", "cdots": "⋯"},
    **{"lVert": "‖", "rVert": "‖", "Vert": "‖", "|": "‖", "lvert": "|", "rvert": "|", "mid": "|", "quad": " "},
    **{"tanh": "tanh", "max": "max", "min": "min", "log": "log", "exp": "exp", "sin": "sin", "cos": "cos"},
    **{"nu": "ν", "delta": "δ", "zeta": "ζ", "psi": "ψ", "chi": "χ", "Xi": "Ξ", "Sigma": "Σ", "Gamma": "Γ"},
    **{"Lambda": "Λ", "Omega": "Ω", "Theta": "Θ", "Psi": "Ψ", "ell": "ℓ", "cap": "∩", "cup": "∪", "subset": "⊂"},
    **{"leftarrow": "←", "gets": "←", "Rightarrow": "⇒", "iff": "⇔", "forall": "∀", "exists": "∃", "langle": "⟨"},
    **{"rangle": "⟩", "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈", "rceil": "⌉", "circ": "∘", "otimes": "⊗"},
}
#: Accents over a letter as Unicode combining marks (``\dot a`` is ȧ, ``\hat H`` is Ĥ); over a longer group the
#: group is kept and the accent dropped.
_ACCENTS = {"dot": "\u0307", "ddot": "\u0308", "hat": "\u0302", "widehat": "\u0302", "bar": "\u0304",
            "overline": "\u0304", "tilde": "\u0303", "widetilde": "\u0303", "vec": "\u20d7"}
_ACCENT = re.compile(r"\\(" + "|".join(_ACCENTS) + r")(?![A-Za-z])\s*(\{[^{}]*\}|[A-Za-z])")
#: Blackboard letters as their Unicode characters (``\mathbb{R}`` is ℝ).
_BLACKBOARD = {"R": "ℝ", "E": "𝔼", "N": "ℕ", "Z": "ℤ", "Q": "ℚ", "C": "ℂ", "P": "ℙ"}
_DESCRIPTION = re.compile(r'(<meta (?:property="og:description"|name="description") content=")([^"]*)(")')


#: A fraction, ``\\frac{a}{b}``, ``\\tfrac14``: each operand a group in braces or a single character.
_FRACTION = re.compile(r"\\[dt]?frac\s*(\{[^{}]*\}|[^\s{}\\])\s*(\{[^{}]*\}|[^\s{}\\])")


def _operand(group: str) -> str:
    """A fraction's operand as text: bare if it is one name or number, else in parentheses (``(a+b)/2``)."""
    inner = group[1:-1].strip() if group.startswith("{") else group
    return inner if re.fullmatch(r"\\?[\w.]+", inner) else f"({inner})"


def _accented(group: str, mark: str) -> str:
    """An accent's argument as text: one letter with the combining ``mark`` over it, a longer group as it is."""
    inner = group[1:-1].strip() if group.startswith("{") else group
    return inner + mark if len(inner) == 1 else inner


def plain_text(text: str) -> str:
    """``text`` with its TeX commands as characters (unknown ones dropped) and no maths delimiters, environments,
    braces or doubled spaces."""
    text = re.sub(r"\\[()\[\]]|\\(?:begin|end)\{[^}]*\}|\\\\", " ", text)  # delimiters, environments, line breaks
    text = text.replace("\\{", "\x01").replace("\\}", "\x02")  # a set's braces are kept: η ∈ {0.1, 0.05}
    text = re.sub(r"\\mathbb\s*\{?([A-Z])\}?", lambda m: _BLACKBOARD.get(m.group(1), m.group(1)), text)
    text = _ACCENT.sub(lambda m: _accented(m.group(2), _ACCENTS[m.group(1)]), text)
    text = _FRACTION.sub(lambda m: f"{_operand(m.group(1))}/{_operand(m.group(2))}", text)
    text = re.sub(r"\\([A-Za-z]+|[,;:!|])", lambda m: " " + _TEX_SYMBOLS.get(m.group(1), "") + " ", text)
    text = re.sub(r"\s+", " ", text.replace("{", "").replace("}", ""))
    text = re.sub(r"\s+([\^_)\],.;:ᵀ/])|([(\[/^_])\s+", r"\1\2", text)
    text = text.replace("\x01", "{").replace("\x02", "}")
    return text.replace("^ᵀ", "ᵀ").replace("^2", "²").replace("^3", "³").strip()


def _plain_descriptions(app, pagename, templatename, context, doctree):
    tags = context.get("metatags")
    if tags:
        context["metatags"] = _DESCRIPTION.sub(lambda m: m.group(1) + plain_text(m.group(2)) + m.group(3), tags)


#: A formula as Sphinx writes it (its TeX, HTML-escaped, between the tags).
_MATH = re.compile(r'<(span|div) class="math notranslate nohighlight"([^>]*)>(.*?)</\1>', re.S)


def _tex_of(inner: str) -> str:
    """The TeX of a formula's HTML: without its equation number's markup, its other tags and its escapes."""
    inner = re.sub(r'<span class="eqno">.*?</span>', " ", inner, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", inner)).replace("&", " ")  # no alignment marks


def _plain_math(app, pagename, templatename, context, doctree):
    body = context.get("body")
    if body:
        # docutils gives a bibliography role="list" and its entries role="doc-biblioentry", which DPUB-ARIA 1.1
        # deprecated; a list's children must be list items (axe-core: aria-required-children)
        body = body.replace('role="doc-biblioentry"', 'role="listitem"')
        context["body"] = _MATH.sub(
            lambda m: (
                f'<{m.group(1)} class="math notranslate nohighlight"{m.group(2)} '
                f'data-plain="{html.escape(plain_text(_tex_of(m.group(3))), quote=True)}">{m.group(3)}</{m.group(1)}>'
            ),
            body,
        )


def _alt_from_caption(app, doctree, docname):
    """Each figure's image says what it shows: its alt text is the caption's first sentence, as plain text (Sphinx
    and myst-nb leave the image's file name there)."""
    from docutils import nodes

    for figure in doctree.findall(nodes.figure):
        caption = next(iter(figure.findall(nodes.caption)), None)
        if caption is None:
            continue
        text = plain_text(caption.astext())
        first = re.split(r"(?<=\.)\s", text, maxsplit=1)[0].rstrip(".")
        for image in figure.findall(nodes.image):
            image["alt"] = first


#: The word and number of a numbered reference, as the book's references print them.
_NUMBERED = re.compile(r"^(?:Fig\.|Table|Chapter|Part|Theorem|Proposition|Corollary|Lemma|Definition|Remark) \d")


def unbroken_numbers(doctree) -> None:
    """In every reference of ``doctree``, a no-break space between a numbered item's word and its number."""
    from docutils import nodes

    for reference in doctree.findall(nodes.reference):
        for text in list(reference.findall(nodes.Text)):
            if _NUMBERED.match(text.astext()):  # the first space is the one after the word
                text.parent.replace(text, nodes.Text(text.astext().replace(" ", "\u00a0", 1)))


def _unbroken_numbers(app, doctree, docname) -> None:
    if app.builder.format == "html":
        unbroken_numbers(doctree)


_TAGS = re.compile(r"<[^>]*>")


_LEADING = re.compile(r"^((?:<span[^>]*>)?)( +)")


def hanging_lines(source):
    """Pygments' formatted lines (``(1, html)`` for a line of code) as ``<span class="sb-line">…</span>\\n``, with
    ``--indent: Nch`` for a line indented by N spaces, which ``_static/book.css`` makes a hanging indent.  The
    indentation is a span of its own (``sb-indent``), which the CSS keeps from breaking: a line broke after it and
    began with an empty row where its first word did not fit.  Empty lines stay bare (an empty inline block would
    lose its height), and the line end stays outside the span, so that copied text has one break per line."""
    for kind, line in source:
        body, end = (line[:-1], "\n") if line.endswith("\n") else (line, "")
        text = _TAGS.sub("", body)
        if kind != 1 or not text.strip():
            yield kind, line
            continue
        indent = len(text) - len(text.lstrip(" "))
        style = ""
        if indent:
            style = f' style="--indent: {indent}ch"'
            body = _LEADING.sub(r'\1<span class="sb-indent">\2</span>', body, count=1)
        yield kind, f'<span class="sb-line"{style}>{body}</span>{end}'


def _hanging_formatters(app) -> None:
    """The HTML builder's highlighters (light and dark) format with :func:`hanging_lines`."""
    for name in ("highlighter", "dark_highlighter"):
        bridge = getattr(app.builder, name, None)
        if bridge is None or getattr(bridge, "formatter", None) is None or bridge.dest != "html":
            continue

        class HangingLines(bridge.formatter):
            def wrap(self, source):
                return super().wrap(hanging_lines(source))

        bridge.formatter = HangingLines


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


#: The stored doctrees by page, as unpickled once for the numbers of cross-references while pages are written.
_STORED_DOCTREES: dict = {}


def _forget_stored_doctrees(app, *args) -> None:
    _STORED_DOCTREES.clear()


def _standard_domain():
    """Sphinx's standard domain, whose ``numref`` reads each stored doctree once."""
    from sphinx.domains.std import StandardDomain
    from sphinx.environment import BuildEnvironment

    class Domain(StandardDomain):
        def _resolve_numref_xref(self, env, *args, **kwargs):
            def stored(docname):
                if docname not in _STORED_DOCTREES:
                    _STORED_DOCTREES[docname] = BuildEnvironment.get_doctree(env, docname)
                return _STORED_DOCTREES[docname]

            env.get_doctree = stored  # read only here: the target's node and its type
            try:
                return super()._resolve_numref_xref(env, *args, **kwargs)
            finally:
                del env.get_doctree

    return Domain


def setup(app):
    app.set_html_assets_policy("always")
    app.add_domain(_standard_domain(), override=True)
    app.connect("env-updated", _forget_stored_doctrees)
    app.connect("build-finished", _forget_stored_doctrees)
    # late, after every extension has added its scripts for the page
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    # after sphinxext-opengraph (priority 500) has added the description tags
    app.connect("html-page-context", _plain_descriptions, priority=900)
    app.connect("html-page-context", _plain_math)
    app.connect("doctree-resolved", _alt_from_caption)
    app.connect("doctree-resolved", _unbroken_numbers)
    app.connect("builder-inited", _hanging_formatters)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
