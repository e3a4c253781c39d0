"""The character-level GPT whose feed-forward block is one of the forms, at a matched parameter count.

nanoGPT's architecture (Karpathy, ``model.py``), written anew: token and
learned position embeddings, ``n_layer`` pre-LayerNorm blocks
``x + attn(LN(x))``, ``x + ffn(LN(x))`` with causal multi-head self-attention,
a final LayerNorm and a linear head, tied to the token embedding by default
(:attr:`ModelShape.tied_head`).  No biases anywhere (nanoGPT's ``bias=False``),
dropout 0.  Only ``ffn`` changes from form to form; it is a layer of
:mod:`symbreak.layers`, which maps ``(batch, time, d) → (batch, time, d)``
directly (every layer acts on the last dimension), so no reshaping is needed.

Matched widths.  The standard MLP has ``m₀ = mlp_ratio · d`` hidden units and
``2 m₀ d`` parameters (``8d²`` at ratio 4); every other form has three
``m × d`` matrices ``Q, K, V``, so ``m = round(2 m₀ / 3)``, the nearest integer
(:func:`ffn_width`; 341 at ``d = 128``, ``3·341·128 = 130 944`` against
``131 072`` parameters, 0.1 % fewer).

Initialisation (``init="gpt2"``, the default): every embedding and matrix
``N(0, 0.02²)``, and the matrices that write into the residual stream
(attention output, the form's ``V``) ``N(0, (0.02/√(2 n_layer))²)``, as GPT-2
and nanoGPT do — one rule for every form, so that the plain-GELU baseline is
nanoGPT's model.  ``init="layer"`` keeps the forms' own ``N(0, 1/fan-in)``.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from symbreak.language.protocol import FormSpec, ModelShape
from symbreak.layers import BilinearMLP, FeedForward, GatedMLP, KeyValueMLP
from symbreak.layers.symmetrised import SymmetrisedGatedMLP

__all__ = ["INIT_STD", "ffn_width", "make_ffn", "ffn_parameters", "CausalSelfAttention", "Block", "GPT", "make_model"]

_KINDS = ("kv", "bilinear", "gated", "symmetrised")

#: The standard deviation of every matrix and embedding at ``init="gpt2"`` (GPT-2's and nanoGPT's 0.02).
INIT_STD = 0.02


def _check_form(form: object) -> FormSpec:
    if not isinstance(form, FormSpec):
        raise TypeError(f"form: expected a FormSpec, got {type(form).__name__}")
    if form.kind not in _KINDS:
        raise ValueError(f"form.kind: expected one of {list(_KINDS)}, got {form.kind!r}")
    return form


def _check_shape(shape: object) -> ModelShape:
    if not isinstance(shape, ModelShape):
        raise TypeError(f"shape: expected a ModelShape, got {type(shape).__name__}")
    if shape.n_embd % shape.n_head:
        raise ValueError(f"shape.n_embd: expected a multiple of n_head = {shape.n_head}, got {shape.n_embd}")
    if shape.init not in ("gpt2", "layer"):
        raise ValueError(f"shape.init: expected 'gpt2' or 'layer', got {shape.init!r}")
    return shape


def ffn_width(form: FormSpec, shape: ModelShape) -> int:
    """The hidden width of ``form``: ``mlp_ratio · d`` for the standard MLP, else ``round(2 · mlp_ratio · d / 3)``."""
    form, shape = _check_form(form), _check_shape(shape)
    plain = shape.mlp_ratio * shape.n_embd
    return plain if form.kind == "kv" else max(1, round(2 * plain / 3))


def make_ffn(form: FormSpec, shape: ModelShape) -> FeedForward:
    """The feed-forward block of ``form`` at ``d = n_embd`` and width :func:`ffn_width`."""
    d, m = shape.n_embd, ffn_width(form, shape)
    if form.kind == "kv":
        return KeyValueMLP(d, m, d, activation=form.activation)
    if form.kind == "bilinear":
        return BilinearMLP(d, m, d, rank=1, activation=form.activation)
    if form.kind == "gated":
        return GatedMLP(d, m, d, activation=form.activation)
    return SymmetrisedGatedMLP(d, m, d, activation=form.activation)


def ffn_parameters(form: FormSpec, shape: ModelShape) -> int:
    """The number of parameters of one feed-forward block of ``form`` (from the tensors' ``numel``)."""
    return sum(p.numel() for p in make_ffn(form, shape).parameters())


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention in which a position attends to itself and earlier positions only."""

    def __init__(self, shape: ModelShape) -> None:
        super().__init__()
        self.n_head = shape.n_head
        self.qkv = nn.Linear(shape.n_embd, 3 * shape.n_embd, bias=False)
        self.proj = nn.Linear(shape.n_embd, shape.n_embd, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Causal multi-head self-attention of ``x`` ``(B, T, C)``: each position attends to itself and earlier ones."""
        B, T, C = x.shape
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in self.qkv(x).split(C, dim=2))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    """A pre-LayerNorm transformer block: ``x + attn(LN(x))``, then ``x + ffn(LN(x))``."""

    def __init__(self, shape: ModelShape, form: FormSpec) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(shape.n_embd, bias=False)
        self.attn = CausalSelfAttention(shape)
        self.ln_2 = nn.LayerNorm(shape.n_embd, bias=False)
        self.ffn = make_ffn(form, shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x + attn(LN(x))``, then ``+ ffn(LN(·))``: a pre-LayerNorm block whose feed-forward part is the form."""
        x = x + self.attn(self.ln_1(x))
        return x + self.ffn(self.ln_2(x))


class GPT(nn.Module):
    """The character-level language model; :meth:`forward` returns the logits and, given targets, the loss."""

    def __init__(self, shape: ModelShape, form: FormSpec, vocab_size: int) -> None:
        super().__init__()
        self.shape, self.form = _check_shape(shape), _check_form(form)
        if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 2:
            raise ValueError(f"vocab_size: expected an int >= 2, got {vocab_size!r}")
        self.wte = nn.Embedding(vocab_size, shape.n_embd)
        self.wpe = nn.Embedding(shape.block_size, shape.n_embd)
        self.blocks = nn.ModuleList(Block(shape, form) for _ in range(shape.n_layer))
        self.ln_f = nn.LayerNorm(shape.n_embd, bias=False)
        self.head = nn.Linear(shape.n_embd, vocab_size, bias=False)
        if shape.tied_head:
            self.head.weight = self.wte.weight
        if shape.init == "gpt2":
            self._init_gpt2()

    @torch.no_grad()
    def _init_gpt2(self) -> None:
        std, residual = INIT_STD, INIT_STD / math.sqrt(2 * self.shape.n_layer)
        for p in (self.wte.weight, self.wpe.weight, self.head.weight):
            p.normal_(0.0, std)
        for block in self.blocks:
            block.attn.qkv.weight.normal_(0.0, std)
            block.attn.proj.weight.normal_(0.0, residual)
            for name, p in block.ffn.named_parameters():
                p.normal_(0.0, residual if name == "V" else std)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None):
        """``(logits, loss)``: logits ``(B, T, vocab)`` and the mean cross-entropy (``None`` without targets)."""
        if not isinstance(idx, torch.Tensor) or idx.ndim != 2:
            raise TypeError(f"idx: expected a 2-d tensor (batch, time) of indices, got {type(idx).__name__}")
        T = idx.shape[1]
        if T > self.shape.block_size:
            raise ValueError(f"idx: expected at most block_size = {self.shape.block_size} positions, got {T}")
        x = self.wte(idx) + self.wpe(torch.arange(T, device=idx.device))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        loss = None if targets is None else F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        return logits, loss

    def parameter_count(self) -> int:
        """Distinct parameters (a tied head is counted once)."""
        return sum(p.numel() for p in self.parameters())


def make_model(shape: ModelShape, form: FormSpec, vocab_size: int, seed: int) -> GPT:
    """The model, initialised from torch's global generator seeded with ``seed``."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed: expected an int >= 0, got {seed!r}")
    torch.manual_seed(seed)
    return GPT(shape, form, vocab_size)
