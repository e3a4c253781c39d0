"""The corpus: the Markdown rules on typed examples, whole plays held out, the vocabulary and the sizes."""

from __future__ import annotations

import pytest
import torch

from symbreak.language.corpus import (
    UNKNOWN,
    Vocabulary,
    load_corpus,
    play_names,
    read_play,
    split_plays,
    strip_line,
    strip_markdown,
)
from symbreak.language.protocol import PROTOCOL

TYPED = """# The Tragedy of Nobody

## ACT I

### SCENE I. A heath.

_Enter FIRST WITCH and SECOND WITCH_

**FIRST WITCH**{br}
When shall we two meet again{br}
In thunder, lightning, or in rain?


**SECOND WITCH**{br}
__\\[Aside]_ When the hurlyburly's done,\\--{br}
1\\. When the battle's lost and won.

_Exeunt_
""".format(br="  ")  # {br}: the two-space line break of Markdown

EXPECTED = """The Tragedy of Nobody

ACT I

SCENE I. A heath.

Enter FIRST WITCH and SECOND WITCH

FIRST WITCH:
When shall we two meet again
In thunder, lightning, or in rain?

SECOND WITCH:
[Aside] When the hurlyburly's done,--
1. When the battle's lost and won.

Exeunt
"""


def test_strip_rules_on_a_typed_example():
    """Headings keep their text, a bold speaker becomes NAME:, escapes and emphasis go, one blank line."""
    assert strip_markdown(TYPED) == EXPECTED


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("#### ACT II", "ACT II"),
        ("# INTERMISSION    ", "INTERMISSION"),
        ("**KING HENRY V**  ", "KING HENRY V:"),
        ("*Sound a horn.*", "Sound a horn."),
        ("_Horns and shout within. LYSANDER wake and", "Horns and shout within. LYSANDER wake and"),
        ("No, no; he'll __\\[ ]_  ", "No, no; he'll [ ]"),
        ("Philomel, with melody, & c.", "Philomel, with melody, & c."),
        ("#hashtag is not a heading", "#hashtag is not a heading"),
    ],
)
def test_strip_line(line, expected):
    assert strip_line(line) == expected


def test_the_plays_are_read_without_markup():
    assert len(play_names()) == 38
    assert "tragedies/hamlet" in play_names()
    text = read_play("tragedies/macbeth")
    assert text.startswith("Macbeth\n\nACT I\n")
    assert "MACBETH:\n" in text
    for marker in ("**", "_", "#", "\\", "  \n", "\n\n\n"):
        assert marker not in text
    assert text.endswith("\n") and not text.endswith("\n\n")


def test_no_play_is_in_two_splits_and_every_play_is_in_one():
    c = PROTOCOL.corpus
    plays = split_plays(c.n_validation, c.n_test, c.split_seed)
    sets = [set(plays[s]) for s in ("train", "validation", "test")]
    assert sum(len(s) for s in sets) == 38 == len(set().union(*sets))
    assert len(sets[1]) == c.n_validation and len(sets[2]) == c.n_test


def test_the_held_out_plays_are_the_documented_ones():
    """A changed split rule or seed changes the held-out plays, and this list with them."""
    plays = split_plays(3, 3, 0)
    assert plays["validation"] == ("comedies/the-merry-wives-of-windsor", "histories/edward-iii", "roman/julius-caesar")
    assert plays["test"] == ("romances/a-winter-s-tale", "tragedies/othello", "tragedies/timon-of-athens")
    assert split_plays(3, 3, 1) != plays


def test_corpus_sizes_vocabulary_and_encoding():
    corpus = load_corpus(3, 3, 0)
    assert corpus.sizes() == {"train": 4_224_406, "validation": 359_098, "test": 403_437}
    v = corpus.vocabulary
    assert v.symbols[0] == UNKNOWN and len(v) == 79 and v.dtype == torch.uint8
    assert corpus.train.dtype == torch.uint8 and int(corpus.train.max()) < len(v)
    assert v.decode(corpus.train[:26]) == "A Midsummer Night's Dream\n"
    assert int((corpus.train == 0).sum()) == 0  # the training text has no unknown character
    # held-out plays may hold characters the training plays lack (Edward III's em dashes): they are unknown
    assert 0 < int((corpus.validation == 0).sum()) < 200


def test_vocabulary_round_trip_and_unknown():
    v = Vocabulary.from_text("abca\n")
    assert v.symbols == (UNKNOWN, "\n", "a", "b", "c")
    ids = v.encode("cab\nz—")
    assert ids.tolist() == [4, 2, 3, 1, 0, 0]
    assert v.decode(ids) == "cab\n" + UNKNOWN * 2
    assert Vocabulary.from_text("x" * 300).dtype == torch.uint8


def test_bad_input_is_rejected_with_its_name():
    with pytest.raises(ValueError, match="name: expected one of the 38 plays"):
        read_play("tragedies/cardenio")
    with pytest.raises(TypeError, match="name: expected a play name"):
        read_play(3)
    with pytest.raises(ValueError, match="n_validation \\+ n_test: expected fewer than the 38 plays"):
        split_plays(20, 18, 0)
    with pytest.raises(ValueError, match="n_test: expected an int >= 1"):
        split_plays(3, 0, 0)
    with pytest.raises(TypeError, match="markdown: expected a str"):
        strip_markdown(b"# x")
    with pytest.raises(ValueError, match="name: expected 'train'"):
        load_corpus(3, 3, 0).split("dev")
