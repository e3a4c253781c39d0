"""The language model: matched feed-forward parameter counts, causal masking, the tied head and the init."""

from __future__ import annotations

import math

import pytest
import torch

from symbreak.language.model import GPT, ffn_parameters, ffn_width, make_ffn, make_model
from symbreak.language.protocol import FORMS, PROTOCOL, TINY, FormSpec, ModelShape
from symbreak.layers import BilinearMLP, GatedMLP, KeyValueMLP
from symbreak.layers.symmetrised import SymmetrisedGatedMLP

SHAPE = PROTOCOL.shape


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.key)
def test_ffn_parameters_match_the_plain_mlp_within_the_rounding_of_m(form):
    """lem-lm-matched-width. Plain MLP: 2·(4d)·d = 8d²; the three-matrix forms 3md with m = round(8d/3): within
    3d/2 of 8d²."""
    d = SHAPE.n_embd
    n = ffn_parameters(form, SHAPE)
    if form.kind == "kv":
        assert (ffn_width(form, SHAPE), n) == (512, 8 * d * d) == (512, 131_072)
    else:
        assert (ffn_width(form, SHAPE), n) == (341, 130_944)
        assert abs(n - 8 * d * d) <= 3 * d / 2  # |3d·round(8d/3) − 8d²| ≤ 3d/2


def test_the_forms_are_the_layers_named_in_the_protocol():
    kinds = {"kv": KeyValueMLP, "bilinear": BilinearMLP, "gated": GatedMLP, "symmetrised": SymmetrisedGatedMLP}
    for form in FORMS:
        ffn = make_ffn(form, SHAPE)
        assert type(ffn) is kinds[form.kind] and ffn.activation.name == form.activation
    assert make_ffn(PROTOCOL.form("symmetric-gelu"), SHAPE).rank == 1


def test_the_whole_model_has_nanogpts_size():
    """0.80M parameters at the baby-GPT shape with the 79-symbol vocabulary (the head is tied: counted once)."""
    model = make_model(SHAPE, PROTOCOL.form("mlp-gelu"), 79, 0)
    assert model.parameter_count() == 805_888
    assert model.head.weight is model.wte.weight
    untied = GPT(ModelShape(tied_head=False), PROTOCOL.form("mlp-gelu"), 79)
    assert untied.parameter_count() == 805_888 + 79 * 128


@pytest.mark.parametrize("form", [FORMS[0], FORMS[2], FORMS[8], FORMS[9]], ids=lambda f: f.key)
def test_changing_a_future_token_does_not_change_earlier_logits(form):
    torch.manual_seed(0)
    model = make_model(TINY.shape, form, 11, 3).eval()
    idx = torch.randint(0, 11, (2, 16))
    later = idx.clone()
    later[:, 9:] = (later[:, 9:] + 1) % 11
    with torch.no_grad():
        a, _ = model(idx)
        b, _ = model(later)
    assert torch.equal(a[:, :9], b[:, :9])
    assert not torch.allclose(a[:, 9:], b[:, 9:])  # the later positions do see the change


def test_loss_at_initialisation_is_near_log_vocabulary_and_backward_runs():
    model = make_model(SHAPE, PROTOCOL.form("swiglu"), 79, 1)
    gen = torch.Generator().manual_seed(0)
    idx, targets = torch.randint(0, 79, (2, 2, 64), generator=gen)
    logits, loss = model(idx, targets)
    assert logits.shape == (2, 64, 79)
    assert abs(float(loss.detach()) - math.log(79)) < 0.1  # targets independent of the input: about uniform
    loss.backward()
    assert all(p.grad is not None for p in model.parameters())


def test_gpt2_initialisation_and_seed():
    model = make_model(SHAPE, PROTOCOL.form("geglu"), 79, 0)
    ffn = model.blocks[0].ffn
    assert abs(float(ffn.Q.detach().std()) - 0.02) < 0.002
    assert abs(float(ffn.V.detach().std()) - 0.02 / math.sqrt(8)) < 0.001
    again = make_model(SHAPE, PROTOCOL.form("geglu"), 79, 0)
    other = make_model(SHAPE, PROTOCOL.form("geglu"), 79, 1)
    assert torch.equal(ffn.Q, again.blocks[0].ffn.Q) and not torch.equal(ffn.Q, other.blocks[0].ffn.Q)
    own = GPT(ModelShape(init="layer"), PROTOCOL.form("geglu"), 79)
    assert abs(float(own.blocks[0].ffn.Q.detach().std()) - 1 / math.sqrt(128)) < 0.005


def test_bad_input_is_rejected_with_its_name():
    form = PROTOCOL.form("mlp-gelu")
    with pytest.raises(ValueError, match="form.kind: expected one of"):
        make_ffn(FormSpec("x", "x", "conv", "relu"), SHAPE)
    with pytest.raises(TypeError, match="form: expected a FormSpec"):
        ffn_width("SwiGLU", SHAPE)
    with pytest.raises(ValueError, match="shape.n_embd: expected a multiple of n_head = 3"):
        GPT(ModelShape(n_head=3), form, 79)
    with pytest.raises(ValueError, match="vocab_size: expected an int >= 2"):
        GPT(SHAPE, form, 1)
    with pytest.raises(ValueError, match="seed: expected an int >= 0"):
        make_model(SHAPE, form, 79, -1)
    with pytest.raises(ValueError, match="idx: expected at most block_size = 16"):
        make_model(TINY.shape, form, 5, 0)(torch.zeros(1, 17, dtype=torch.long))
