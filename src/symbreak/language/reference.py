"""Published reference points that the language-model chapter quotes, not re-measured: nanoGPT, Shazeer's Table 1.

* :data:`NANOGPT_BABY` — the validation loss that nanoGPT's ``README`` reports
  for its CPU "baby GPT" (``config/train_shakespeare_char.py`` with
  ``--device=cpu --compile=False --eval_iters=20 --log_interval=1
  --block_size=64 --batch_size=12 --n_layer=4 --n_head=4 --n_embd=128
  --max_iters=2000 --lr_decay_iters=2000 --dropout=0.0``): about 1.88 on the
  1 MB tiny-Shakespeare file, a plain GELU MLP, cross-entropy per character in
  nats (Karpathy, nanoGPT, ``README.md``, "quick start", the paragraph "I only
  have a macbook": "gets us a loss of only 1.88").
* :data:`SHAZEER_TABLE_1` — held-out log-perplexity of the T5-base-sized
  encoder–decoder of Shazeer (2020, "GLU Variants Improve Transformer",
  arXiv:2002.05202, Table 1) on the span-filling pre-training task, after
  65,536 and 524,288 steps, each feed-forward layer at the plain layer's
  parameter and operation count (the gated ones with ``d_ff = 2048`` instead of
  3072).  His losses are per SentencePiece token, ours per character: only the
  *order* of the forms can be compared, not the size of the differences.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["NanoGPTReference", "NANOGPT_BABY", "ShazeerRow", "SHAZEER_STEPS", "SHAZEER_TABLE_1", "SHAZEER_BASELINE"]


@dataclass(frozen=True)
class NanoGPTReference:
    """A reported validation loss with the run's shape and length."""

    validation_loss: float
    n_layer: int
    n_head: int
    n_embd: int
    block_size: int
    batch_size: int
    iterations: int
    learning_rate: float
    corpus: str
    train_chars: int
    vocabulary: int
    eval_batches: int


#: nanoGPT's CPU baby GPT on tiny Shakespeare (``learning_rate`` is the config file's 1e-3).
NANOGPT_BABY = NanoGPTReference(
    validation_loss=1.88,
    n_layer=4,
    n_head=4,
    n_embd=128,
    block_size=64,
    batch_size=12,
    iterations=2000,
    learning_rate=1e-3,
    corpus="tiny Shakespeare (about 1 MB, the last 10 % of the file held out)",
    train_chars=1_003_854,  # data/shakespeare_char/readme.md: "train.bin has 1,003,854 tokens" (val.bin 111,540)
    vocabulary=65,  # prepare.py: "vocab size: 65"
    eval_batches=20,  # --eval_iters=20 in the README's CPU command
)


@dataclass(frozen=True)
class ShazeerRow:
    """One row of Shazeer's Table 1: his name, the book's form key (``None``: not run here), his two losses."""

    name: str
    form_key: str | None
    steps_65k: float
    steps_524k: float


#: The training steps of the two columns of Shazeer's Table 1.
SHAZEER_STEPS = (65_536, 524_288)

#: Shazeer (2020), Table 1, in his row order.
SHAZEER_TABLE_1: tuple[ShazeerRow, ...] = (
    ShazeerRow("FFN_ReLU (baseline)", "mlp-relu", 1.997, 1.677),
    ShazeerRow("FFN_GELU", "mlp-gelu", 1.983, 1.679),
    ShazeerRow("FFN_Swish", None, 1.994, 1.683),
    ShazeerRow("FFN_GLU", "glu", 1.982, 1.663),
    ShazeerRow("FFN_Bilinear", "bilinear", 1.960, 1.648),
    ShazeerRow("FFN_GEGLU", "geglu", 1.942, 1.633),
    ShazeerRow("FFN_SwiGLU", "swiglu", 1.944, 1.636),
    ShazeerRow("FFN_ReGLU", "reglu", 1.953, 1.645),
)

#: The row every difference of Shazeer's table is taken against (his baseline, the ReLU MLP).
SHAZEER_BASELINE = SHAZEER_TABLE_1[0]
