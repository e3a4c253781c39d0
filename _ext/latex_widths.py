"""The width model of the PDF's tables (``make pdf``): how wide a cell's text and formulas are set, in characters of
the body's type, and how a table's columns share the line, headings on at most two lines where there is room.

Used by ``latex_tables`` (:func:`_widths` sizes the columns of a longtable, which cannot size them to their contents
as tabulary does; :func:`_lines` estimates a table's height).
"""

from __future__ import annotations

import re

from docutils import nodes

# In characters of the body's 10 pt serif (about 4.8 pt, 0.48 em, each): the text width (6.5 in), the space between
# two columns (two \tabcolsep, 12 pt), and how much wider the headings' sans-serif letters are
LINE = 98
PAD = 2.5
#: The space between two columns of a table whose columns do not fit at ``PAD`` (two \tabcolsep of 4 pt): Table 5.1
#: fits at it on one line a row, as tabulary had set it.
TIGHT = 1.67
SANS = 1.2
#: A formula this wide or narrower is kept on one line (one cell's "α = −3/2", "< 10⁻¹²").
WHOLE = 12.0
#: Widths in em of the serif's letters that are not of average width (0.48 em); the others, and any letter of a
#: code literal (a 0.6 em monospace), count as their share of the average.
EM = {
    **dict.fromkeys(" \u00a0.,;:'!|", 0.25),
    **dict.fromkeys("()[]{}-/", 0.33),
    **dict.fromkeys("fijlt", 0.28),
    **dict.fromkeys("rs", 0.37),
    **dict.fromkeys("0123456789", 0.5),
    **dict.fromkeys("ABCDEFGHIJKLNOPQRSTUVXYZ", 0.68),
    **dict.fromkeys("mwMW", 0.85),
}


def _chars(text: str, code: bool = False) -> float:
    """How many average characters of the body's serif ``text`` is as wide as: "(proof)" is about six."""
    return len(text) * 0.6 / 0.48 if code else sum(EM.get(c, 0.48) for c in text) / 0.48


def _longest_word(entry: nodes.Element, heading: bool) -> float:
    """The longest piece of a table cell's text a line cannot break, in characters of the body's type.

    Words of prose (which break at a space but not at a no-break space, and after a hyphen), and the pieces of code
    between the points where Sphinx breaks it (after ``.``, ``,``, ``;``,
    ``/`` and, here, ``_``); a heading's letters are sans-serif, ``SANS``
    times as wide; a formula as a whole up to ``WHOLE`` characters, a longer one its widest piece
    (:func:`_math_pieces`): TeX broke ":math:`< 10^{-12}`" after its "<" and a heading
    ":math:`\\alpha = -\\tfrac{3}{2}`" after its "=".
    """
    longest = 0.0
    for text in entry.findall(nodes.Text):
        if isinstance(text.parent, nodes.math):  # a heading's maths is not sans-serif
            pieces = _math_pieces(text.astext())
            longest = max(longest, sum(pieces) if sum(pieces) <= WHOLE else max(pieces))
            continue
        code = isinstance(text.parent, nodes.literal)
        pieces = re.split(r"(?<=[.,;/_])" if code else r"(?<=-)", text.astext())
        sans = SANS if heading and not code else 1.0  # a heading's code is monospace too
        words = [_chars(w, code) * sans for piece in pieces for w in re.split(r"[ \t\n]+", piece) if w]
        longest = max([longest, *words])
    return longest


#: Math, in average characters (0.48 em) of the body's type: a relation with its spaces (0.78 + 0.55 em), a
#: binary operator with its spaces (0.78 + 0.44 em; a sign without them), a delimiter, a symbol, TeX's spaces;
#: scripts are set at 0.7 of the size.  TeX breaks a formula only after a relation or a binary operator outside
#: braces and ``\\left … \\right``.
MATH = {"relation": 2.8, "binary": 2.5, "sign": 1.6, "delimiter": 0.8, "symbol": 1.04, "script": 0.7}
RELATIONS = {"=", "<", ">", r"\le", r"\ge", r"\leq", r"\geq", r"\ne", r"\neq", r"\ll", r"\gg", r"\approx"}
RELATIONS |= {r"\sim", r"\to", r"\in", r"\mapsto", r"\equiv"}
BINARY = {"+", "-", r"\pm", r"\mp", r"\times", r"\cdot"}
# TeX's spaces, the radical sign, and the thin space after an operator name ("erf")
WIDTHS = {r"\,": 0.35, r"\;": 0.58, r"\:": 0.46, r"\!": -0.35, r"\quad": 2.1, r"\qquad": 4.2, r"\sqrt": 1.7}
WIDTHS[r"\operatorname"] = 0.35
_OPERATORS = ("tanh", "sin", "cos", "exp", "log", "max", "min", "det", "tr", "dim", "ker", "sup", "inf", "lim")
WIDTHS |= {"\\" + f: 0.9 * len(f) + 0.35 for f in _OPERATORS}
# "deg" and its subscript (Table 10.5's headings deg_m P): 3.1 characters of letters and the thin space, and a
# script's wide "m" that the mean symbol width underestimates
WIDTHS[r"\deg"] = 4.0
UNSET = {r"\left", r"\right", r"\mathrm", r"\mathbf", r"\mathbb", r"\mathcal", r"\text"}
UNSET |= {r"\displaystyle", r"\textstyle", r"\big", r"\Big", r"\bigl", r"\bigr", r"\Bigl", r"\Bigr"}


def _math_pieces(tex: str) -> list[float]:
    """How wide, in characters of the body's type, each piece of a formula is that a line cannot break.

    A fraction ``\\frac{a}{b}`` is as wide as the wider of ``a`` and ``b`` (inline, they stand one over the other).
    TeX had broken ":math:`< 10^{-12}`" after its "<", which left "10⁻¹²" wider than its column, and could not
    break "(erf(√2 z/2) + 1)" inside its ``\\left( … \\right)``, which stuck out of a column sized to its pieces.
    """
    fraction = re.compile(r"\\[dt]?frac\s*(?:\{([^{}]*)\}|(\w))\s*(?:\{([^{}]*)\}|(\w))")
    while (m := fraction.search(tex)) is not None:
        a, b = m[1] if m[1] is not None else m[2], m[3] if m[3] is not None else m[4]
        tex = tex[: m.start()] + "{" + max(a, b, key=len) + "}" + tex[m.end() :]
    pieces, width, depth, scripts, operand = [], 0.0, 0, [], False
    for token in re.findall(r"\\[A-Za-z]+|\\.|\S", tex):
        scale = MATH["script"] if scripts else 1.0
        if token in "^_":
            scripts.append(depth)
            continue
        if token in {"{", r"\left"}:
            depth += 1
            width += 0.2 if token == r"\left" else 0.0  # a delimiter grown to what it encloses
            continue
        if token in {"}", r"\right"}:
            depth -= 1
            width += 0.2 if token == r"\right" else 0.0
            while scripts and scripts[-1] >= depth:
                scripts.pop()
            continue
        if token in UNSET:
            continue
        if token in WIDTHS:
            width += WIDTHS[token] * scale
            continue
        kind = "symbol"
        if token in RELATIONS:
            kind = "relation"
        elif token in BINARY:
            kind = "binary" if operand else "sign"
        elif token in {"(", ")", "[", "]", "|"}:
            kind = "delimiter"
        width += MATH[kind] * scale
        operand = kind in {"symbol", "delimiter"} and token not in {"(", "[", ","}
        if scripts and scripts[-1] == depth:
            scripts.pop()  # a script of one token: x^2
            operand = True
        elif kind in {"relation", "binary"} and depth == 0 and not scripts:
            pieces.append(width)
            width = 0.0
    return [*pieces, width]


def _math_length(tex: str) -> float:
    """About how many characters of the body's type a formula sets (:func:`_math_pieces`)."""
    return sum(_math_pieces(tex))


def _shares(widths: list[float], least: list[float], pad: float) -> list[float]:
    """Column shares (``\\X``'s first argument) from the columns' natural ``widths``, each at least ``least``, plus
    ``pad``.

    The line holds ``LINE`` characters in all, columns and the ``pad`` between them.  Where the natural widths fit,
    the columns share the line in proportion to them.  Where they do not, a column narrower than an equal share
    keeps its natural width and the others share the rest in proportion, as tabulary does; a column whose
    proportional share is below its least gets that.  Shrinking every column in proportion had wrapped each cell
    of Table 7.2's four verdict columns.
    """
    n = len(widths)
    narrow = sum(widths) + pad * n > LINE
    fixed = {i: max(w, least[i]) + pad for i, w in enumerate(widths) if narrow and w + pad <= LINE / n}
    while True:
        free = [i for i in range(n) if i not in fixed]
        room = LINE - sum(fixed.values()) - pad * len(free)
        scale = room / sum(widths[i] for i in free) if free else 0.0
        short = {i: least[i] + pad for i in free if widths[i] * scale < least[i]}
        if not short:
            return [fixed.get(i, widths[i] * scale + pad) for i in range(n)]
        fixed.update(short)


#: How much wider the bold serif's letters are than the regular's (a group label, "full, packed", of Table 10.7).
BOLD = 1.1


def _size(entry: nodes.Element) -> float:
    """How wide a cell's text is on one line, in characters of the body's type (bold ``BOLD`` times as wide)."""
    texts = list(entry.findall(nodes.Text))
    bold = BOLD if any(isinstance(t.parent, nodes.strong) for t in texts) else 1.0
    return bold * sum(
        _math_length(t.astext()) if isinstance(t.parent, nodes.math) else _chars(t.astext()) for t in texts
    )


def _lines(table: nodes.table, shares: list[float], pad: float) -> int:
    """About how many lines of the body's type a table takes at these column ``shares``: its caption (set across the
    line, ``\\LTcapwidth`` in symbreakbook.sty), the longest cell of each row over its column's width (the heading's
    sans-serif ``SANS`` times as wide), and two for the rules and the space around them, with a margin."""
    caption = next(iter(table.findall(nodes.title)), None)
    lines = 2 + (-(-_chars(caption.astext()) // LINE) if caption is not None else 0)
    for row in table.findall(nodes.row):
        scale = SANS if isinstance(row.parent, nodes.thead) else 1.0
        cells = zip(row.children, shares, strict=False)
        lines += max((-(-scale * _size(entry) // max(share - pad, 1.0)) for entry, share in cells), default=1)
    lines += any(row.get("sb_groups") for row in table.findall(nodes.row))  # a row of spanning headings
    return int(1.15 * lines + 2)  # a margin: Table 14.4 left its last row for the next page at the bare count


def _widths(table: nodes.table, n: int) -> tuple[list[float], float]:
    """The shares of a table's ``n`` columns (:func:`_shares`) from their longest body cell (mathematics counted as
    :func:`_math_length` sets it) or a third of their heading (which may take three lines), whichever is longer, in
    characters, but never less than their longest word (:func:`_longest_word`), or a right-aligned number's
    whole length.  Each column also gets ``PAD`` (``TIGHT`` where the natural widths do not fit at ``PAD``)
    characters for the space between columns, which ``\\X`` takes from each column's share: without it a column of
    short cells got less than its longest word.  A heading keeps to ``HEADING_LINES`` lines where the line has the
    room (:func:`_heading_floors`): a column of short numbers had set "share / of / peak" (Table 10.7) and
    "± 95 / %" (Table 14.9) on three.  Returns the shares and that space."""
    widths, least, headings, margins = [4.0] * n, [0.0] * n, [[] for _ in range(n)], [BODY_MARGIN] * n
    for row in table.findall(nodes.row):
        heading = isinstance(row.parent, nodes.thead)
        for col, entry in enumerate(row.children[:n]):
            word = _longest_word(entry, heading)
            size = _size(entry)
            if heading:  # on at most three lines
                size = max(word, SANS * size / 3)
                headings[col].append(_heading_pieces(entry))
            elif _is_number(entry):  # a number, kept on one line ("+0.006 ± 0.003")
                word = max(word, size)
            elif col == 0 and not _is_number(entry):  # a row's label, on at most two lines where there is room
                headings[col].append(_heading_pieces(entry, 1.0))
            if not heading and any(True for _ in entry.findall(nodes.math)):
                margins[col] = MATH_MARGIN
            widths[col] = max(widths[col], min(size, 60))
            least[col] = max(least[col], word)
    pad = PAD if sum(widths) + PAD * n <= LINE else TIGHT
    # the width each column gets before headings are raised: its natural width, or less where the line is short (a
    # row's label of Table 8.3, "inverse scaling, α > 0", fits its column's natural width on one line but took three
    # in the share it got)
    first = [min(w, share - pad) for w, share in zip(widths, _shares(widths, least, pad), strict=True)]
    heads = [  # the two-line width of each heading (or label) that takes more lines at that width
        max([_heading_width(h, HEADING_LINES) for h in hs if _fill(h, max(w, lo)) > HEADING_LINES], default=0.0)
        for hs, w, lo in zip(headings, first, least, strict=True)
    ]
    return _shares(widths, _heading_floors(widths, least, heads, pad, margins), pad), pad


def _is_number(entry: nodes.Element) -> bool:
    """Whether a body cell is right-aligned in the HTML (class ``text-right``): a number."""
    return "text-right" in entry.get("classes", [])


#: Convention: a heading is set on at most this many lines where the table's line has the room.
HEADING_LINES = 2
#: A heading's column gets this much more than the estimate of its lines' width (sans-serif letters vary more).
HEADING_MARGIN = 1.08


#: Convention: where a table has room to spare, a heading may take it only while every column keeps this much more
#: than its natural width (none for text, whose estimate held once bold was counted ``BOLD`` times as wide: Table
#: 10.7's group label "full, packed sym(W_j)" had wrapped).
BODY_MARGIN = 1.0
#: The same for a column with formulas in its body, whose estimate was up to 7 % short (Table 8.2's GELU (tanh)).
MATH_MARGIN = 1.12
#: Convention: where it has none, a column whose cells wrap anyway gives a heading at most this share of its width,
#: and keeps at least ``WORD_MARGIN`` times its longest word (the estimate of Table 8.2's widest formula was short).
GIVE = 0.15
WORD_MARGIN = 1.2


def _heading_floors(
    widths: list[float], least: list[float], heads: list[float], pad: float, margins: list[float] | None = None
) -> list[float]:
    """The columns' least widths, raised to their heading's width on ``HEADING_LINES`` lines (``heads``; 0 where it
    needs no raise), first the columns that need the least extra width, within a budget.  Where the natural widths
    (``widths``) fit the line, the budget is the room they leave, each counted ``margins`` times (``BODY_MARGIN``, or
    ``MATH_MARGIN`` for a column of formulas); where they do
    not, it is ``GIVE`` of each wrapping column's share (:func:`_shares`), down to ``WORD_MARGIN`` times its longest
    word.  The columns of numbers keep their widths, and a body's estimate is never cut into: a heading raised at
    the cost of a formula's column had set Table 8.2's GELU (tanh) 6 pt into the next column."""
    n = len(widths)
    floors = list(least)
    if sum(widths) + pad * n <= LINE:
        margins = margins or [BODY_MARGIN] * n
        room = LINE - pad * n - sum(max(m * w, f) for m, w, f in zip(margins, widths, floors, strict=True))
    else:
        shares = _shares(widths, least, pad)
        wrapping = [i for i in range(n) if widths[i] + pad > LINE / n]
        room = sum(
            max(0.0, shares[i] - pad - max((1 - GIVE) * (shares[i] - pad), WORD_MARGIN * least[i])) for i in wrapping
        )
        widths = [0.0 if i in wrapping else w for i, w in enumerate(widths)]  # those give from their shares
    for col in sorted(range(n), key=lambda i: heads[i] - max(widths[i], least[i])):
        extra = max(heads[col], widths[col]) - max(floors[col], widths[col])
        if heads[col] > floors[col] and extra <= room:
            floors[col], room = heads[col], room - extra
    return floors


#: The width of a space, in characters of the body's type.
SPACE = EM[" "] / 0.48


def _heading_pieces(entry: nodes.Element, sans: float = SANS) -> list[tuple[float, float]]:
    """A heading's pieces that a line cannot break, in order, as ``(space before it, its width)`` in characters of
    the body's type (its letters ``sans`` times as wide; 1 for a body cell): its words (split at spaces and after
    hyphens; a no-break space joins two words), its code between Sphinx's break points, and its formulas as
    :func:`_longest_word` counts them."""
    pieces: list[tuple[float, float]] = []
    gap = 0.0
    for text in entry.findall(nodes.Text):
        value = text.astext()
        if isinstance(text.parent, nodes.math):
            parts = _math_pieces(value)
            parts = [sum(parts)] if sum(parts) <= WHOLE else parts
            glued = [(gap if i == 0 else 0.0, w) for i, w in enumerate(parts)]
            pieces, gap = _join(pieces, glued), 0.0
            continue
        code = isinstance(text.parent, nodes.literal)
        scale = 1.0 if code else sans
        words = re.split(r"[ \t\n]+", value)
        for i, word in enumerate(words):
            if i > 0:
                gap = SPACE * scale
            if not word:
                continue
            parts = re.split(r"(?<=[.,;/_])" if code else r"(?<=-)", word)
            glued = [(gap if k == 0 else 0.0, _chars(part, code) * scale) for k, part in enumerate(parts) if part]
            pieces, gap = _join(pieces, glued), 0.0
        if value and value[-1] in " \t\n":
            gap = SPACE * scale
    return pieces


def _join(pieces: list[tuple[float, float]], new: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """``pieces`` followed by ``new``; a first new piece with no space before it continues the last piece
    ("(σ" and "=" of a heading "(σ = id)" where σ is a formula)."""
    if pieces and new and new[0][0] == 0.0:
        (gap, width), (_, more) = pieces[-1], new[0]
        return [*pieces[:-1], (gap, width + more), *new[1:]]
    return [*pieces, *new]


def _fill(pieces: list[tuple[float, float]], width: float) -> int:
    """How many lines a heading's ``pieces`` (:func:`_heading_pieces`) take, filled greedily line by line into
    ``width`` characters, as TeX sets a ragged-right cell."""
    if not pieces:
        return 0
    used, taken = 1, pieces[0][1]
    for gap, piece in pieces[1:]:
        if taken + gap + piece <= width:
            taken += gap + piece
        else:
            used, taken = used + 1, piece
    return used


def _heading_width(pieces: list[tuple[float, float]], lines: int) -> float:
    """The least width, in characters of the body's type, at which a heading's ``pieces`` (:func:`_heading_pieces`)
    take at most ``lines`` lines (:func:`_fill`); with ``HEADING_MARGIN``."""
    if not pieces:
        return 0.0
    runs = {
        sum(g + w for g, w in pieces[i : j + 1]) - pieces[i][0]
        for i in range(len(pieces))
        for j in range(i, len(pieces))
    }
    fitting = [w for w in sorted(runs) if w >= max(w for _, w in pieces) and _fill(pieces, w) <= lines]
    return HEADING_MARGIN * fitting[0]
