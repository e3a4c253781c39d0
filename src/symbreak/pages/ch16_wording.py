"""Chapter 16's wording: losses, intervals and p-values as its tables print them, counts in words, and the
sentences that say its verdicts and the held-out plays' titles."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from symbreak.prose import listed

__all__ = [
    "loss",
    "interval",
    "p_text",
    "counted",
    "in_words",
    "resolved_sentence",
    "read_together",
    "read_for_each",
    "each_reads",
    "verdicts",
    "shazeer_order",
    "question_maths",
    "play_title",
]


def loss(value: float) -> str:
    """A loss in nats at three decimals (``"diverged"`` for ``inf``)."""
    return "diverged" if not math.isfinite(value) else f"{value:.3f}"


def interval(mean: float, half: float, sign: bool = False) -> str:
    """``mean ± half`` at three decimals; with ``sign``, the mean carries its sign, minus as U+2212 (a difference)."""
    if not math.isfinite(mean):
        return "diverged"
    head = f"{mean:+.3f}".replace("-", "\u2212") if sign else f"{mean:.3f}"
    return head if math.isnan(half) else f"{head} ± {half:.3f}"


def p_text(p: float) -> str:
    """A p-value at three decimals (``"1.000"``, ``"0.012"``), ``"< 0.001"`` below that, as chapters 14 and 15 print
    theirs."""
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


_WORDS = ("none", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def in_words(n: int) -> str:
    """A count as the chapter's sentences write it: ``"none"`` to ``"nine"`` in words, digits from 10 on."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n: expected a count (an int >= 0), got {n!r}")
    return _WORDS[n] if n < len(_WORDS) else f"{n:,}"


def counted(n: int, singular: str, plural: str) -> str:
    """``n`` in words (:func:`in_words`) with the verb that agrees with it: ``"one differs"``, ``"five differ"``,
    ``"none differ"``."""
    return f"{in_words(n)} {singular if n == 1 else plural}"


def resolved_sentence(resolved: int, total: int, what: str = "primary contrasts") -> str:
    """``"None of the 4 primary contrasts is resolved"``, ``"One of the 4 … is"``, ``"Two of the 4 … are"``,
    ``"All 4 … are"``: how many of ``total`` comparisons read other than *level*, as a sentence opens."""
    if not 0 <= resolved <= total or total < 1:
        raise ValueError(f"resolved: expected a count from 0 to total = {total} >= 1, got {resolved!r}")
    if resolved == total:
        return f"{'Both' if total == 2 else f'All {total}'} {what} {'is' if total == 1 else 'are'} resolved"
    verb = "is" if resolved in (0, 1) else "are"
    return f"{in_words(resolved).capitalize()} of the {total} {what} {verb} resolved"


def read_together(readings: Sequence[str]) -> str:
    """Two or more verdicts of the contrasts a sentence has just named, each said once: ``"Both read *level*"``,
    ``"All 3 read *level*"``, else ``"The first reads *better*, the second *level*"``."""
    readings = list(readings)
    if len(readings) < 2:
        raise ValueError(f"readings: expected two or more verdicts, got {readings!r}")
    if len(set(readings)) == 1:
        return f"{'Both' if len(readings) == 2 else f'All {len(readings)}'} read *{readings[0]}*"
    ordinals = ("first", "second", "third", "fourth", "fifth")
    if len(readings) > len(ordinals):
        raise ValueError(f"readings: expected at most {len(ordinals)} verdicts, got {len(readings)}")
    head = f"The first reads *{readings[0]}*"
    return ", ".join([head, *[f"the {ordinals[i]} *{w}*" for i, w in enumerate(readings) if i]])


def read_for_each(readings: dict[str, str], what: str = "the comparison") -> str:
    """One verdict per σ, equal readings grouped: ``"For SiLU and for GELU the comparison reads *level*"``, else
    ``"For SiLU the comparison reads *better*, for GELU *level*"`` (in the order each verdict first appears)."""
    if not readings:
        raise ValueError("readings: expected at least one σ's verdict, got none")
    groups: dict[str, list[str]] = {}
    for name, word in readings.items():
        groups.setdefault(word, []).append(name)
    parts = [f"for {' and for '.join(names)}" for names in groups.values()]
    words = list(groups)
    first = f"{parts[0][0].upper()}{parts[0][1:]} {what} reads *{words[0]}*"
    return ", ".join([first, *[f"{part} *{word}*" for part, word in zip(parts[1:], words[1:], strict=True)]])


def each_reads(readings: dict[str, str], verbs: tuple[str, str] = ("is", "are")) -> str:
    """Each named form's verdict, equal ones said once, in the order each verdict first appears:
    ``"SwiGLU is *level*, GEGLU *better*"``, ``"SwiGLU and GEGLU are both *level*"`` (``verbs``: singular and
    plural, ``("reads", "read")`` for ``"SwiGLU reads *level*"``)."""
    if not readings:
        raise ValueError("readings: expected at least one form's verdict, got none")
    groups: dict[str, list[str]] = {}
    for name, word in readings.items():
        groups.setdefault(word, []).append(name)
    said = []
    for i, (word, names) in enumerate(groups.items()):
        verb = "" if i else f" {verbs[0] if len(names) == 1 else verbs[1]}"
        every = {2: " both"}.get(len(names), " all") if len(groups) == 1 and len(names) > 1 else ""
        # "are both", but "both read"
        words = f"{verb}{every}" if verb in (" is", " are") else f"{every}{verb}"
        said.append(f"{listed(names)}{words} *{word}*")
    return ", ".join(said)


def verdicts(resolved: str, exchange: dict[str, str], gated: dict[str, str]) -> str:
    """Every primary verdict in one sentence: ``resolved`` (:func:`resolved_sentence`), then the gated forms against
    their symmetrised controls (``exchange``) and against the symmetric rank-1 form with the same σ (``gated``),
    each ``{form: verdict}`` said by :func:`each_reads`; Markdown with maths (glue it for ``{glue:md}`…:myst```)."""
    return (
        f"{resolved}: against their symmetrised controls, {each_reads(exchange, ('reads', 'read'))}, and against the"
        f" symmetric rank-1 form with the same $\\sigma$, {each_reads(gated, ('reads', 'read'))}"
    )


def shazeer_order(counts: dict[str, int]) -> str:
    """How the direction of Shazeer's differences fares here, zero counts left out: ``"reproduced for one of his
    forms and not resolved for the other five"`` (``counts``: ``agrees``, ``level here``, ``disagrees``)."""
    said = [
        (verb, counts.get(key, 0))
        for key, verb in (("agrees", "reproduced"), ("level here", "not resolved"), ("disagrees", "reversed"))
    ]
    said = [(verb, n) for verb, n in said if n]
    if not said:
        raise ValueError(f"counts: expected at least one of his forms run here, got {counts!r}")
    (verb, n), rest = said[0], said[1:]
    if not rest:
        return f"{verb} for {'his one form' if n == 1 else f'all {in_words(n)} of his forms'}"
    if len(rest) == 1:
        return f"{verb} for {in_words(n)} of his forms and {rest[0][0]} for the other {in_words(rest[0][1])}"
    return f"{verb} for {in_words(n)} of his forms, " + listed([f"{v} for {in_words(k)}" for v, k in rest])


def question_maths(question: str) -> str:
    """A contrast's question with ``σ = SiLU`` set as maths, ``$\\sigma = \\mathrm{SiLU}$``, so that no line breaks
    after the equals sign."""
    return re.sub(r"σ = (\w+)", lambda m: f"$\\sigma = \\mathrm{{{m.group(1)}}}$", question)


#: Plays whose title the rule of :func:`play_title` cannot rebuild from the file's name.
_TITLES = {
    "a-winter-s-tale": "The Winter's Tale",
    "love-s-labours-lost": "Love's Labour's Lost",
    "two-gentlemen-of-verona": "The Two Gentlemen of Verona",
}


def play_title(name: str) -> str:
    """A play's title from its file's name: ``"histories/henry-iv-part-1"`` → ``"Henry IV, Part 1"``,
    ``"comedies/a-midsummer-night-s-dream"`` → ``"A Midsummer Night's Dream"``."""
    slug = name.split("/")[-1]
    if not slug or not all(w.isalnum() for w in slug.split("-")):
        raise ValueError(f"name: expected a play's file name such as 'tragedies/king-lear', got {name!r}")
    if slug in _TITLES:
        return _TITLES[slug]
    words = [
        w.upper() if set(w) <= set("ivx") else w if i and w in ("of", "the", "and", "for") else w.capitalize()
        for i, w in enumerate(slug.replace("-s-", "'s-").split("-"))
    ]
    return " ".join(words).replace(" Part ", ", Part ")
