"""symbreak.dynamics.training: deterministic training, its optimisers and history, teacher data and the students."""

from __future__ import annotations

import copy

import pytest
import torch

from helpers import gelu_teacher_data, small_layer
from symbreak import dynamics as D
from symbreak.layers import BilinearMLP, GatedMLP, KeyValueMLP

F64 = torch.float64

pytestmark = pytest.mark.usefixtures("one_thread")


_layer = small_layer


def test_training_is_deterministic():
    X, Y = gelu_teacher_data(3)
    runs = []
    for _ in range(2):
        torch.manual_seed(5)
        layer = _layer("gated", "silu")
        D.train(layer, X, Y, lr=0.05, steps=20)
        runs.append(D.flat_params(layer))
    assert torch.equal(runs[0], runs[1])


def test_optimizers_and_history():
    X, Y = gelu_teacher_data(4)
    for opt in ("gd", "momentum", "adam"):
        torch.manual_seed(0)
        layer = _layer("rank1", "silu")
        start = copy.deepcopy(layer)
        h = D.train(layer, X, Y, lr=0.01, steps=10, optimizer=opt, record_every=5)
        assert h.steps == [0, 5, 10] and h.as_tensor("qk").shape == (3, 3)
        assert h.loss[-1] < h.loss[0]
        assert not torch.equal(D.flat_params(start), D.flat_params(layer))


def test_bad_arguments():
    X, Y = gelu_teacher_data(0)
    layer = _layer("gated", "silu")
    with pytest.raises(ValueError, match="optimizer: expected one of"):
        D.train(layer, X, Y, lr=0.1, steps=1, optimizer="sgd")
    with pytest.raises(ValueError, match="lr: expected a positive learning rate, got 0"):
        D.train(layer, X, Y, lr=0, steps=1)
    with pytest.raises(ValueError, match="steps: expected an int >= 0"):
        D.train(layer, X, Y, lr=0.1, steps=-1)
    with pytest.raises(TypeError, match="layer: expected a symbreak layer"):
        D.train(torch.nn.Linear(4, 2), X, Y, lr=0.1, steps=1)
    with pytest.raises(ValueError, match="name: expected 'qk' or 'kv'"):
        D.History().as_tensor("qv")


def test_teacher_data_unit_mean_square():
    """With unit_mean_square the targets have mean square 1 and are the scaled teacher's outputs on the same X."""
    torch.manual_seed(7)
    teacher = BilinearMLP(3, 5, 2, rank=3, activation="gelu", dtype=F64)
    X0, Y0 = D.teacher_data(copy.deepcopy(teacher), 3, 50, seed=11)
    X, Y = D.teacher_data(teacher, 3, 50, seed=11, unit_mean_square=True)
    assert torch.equal(X, X0)
    assert abs(float((Y**2).mean()) - 1) < 1e-12
    scale = float((Y0**2).mean().sqrt())
    assert torch.allclose(Y * scale, Y0, rtol=1e-12, atol=0)  # V/s gives outputs Y0/s: the layer is linear in V
    with torch.no_grad():
        assert torch.equal(Y, teacher(X))


def test_teacher_data_unit_mean_square_needs_values():
    with pytest.raises(TypeError, match="teacher: expected a layer with values V"):
        D.teacher_data(torch.tanh, 2, 4, seed=0, unit_mean_square=True)


def _reference_output(form: str, act: str, layer, x: torch.Tensor) -> torch.Tensor:
    """The forms of the book, written from their definitions with the activation taken from torch."""
    sigma = {"relu": torch.relu, "gelu": torch.nn.functional.gelu, "silu": torch.nn.functional.silu}.get(
        act, lambda z: z
    )
    if form == "rank1":  # σ((x·q_j)(x·k_j)) v_j
        return sigma((x @ layer.Q[0].T) * (x @ layer.K[0].T)) @ layer.V
    if form == "gated":  # σ(x·q_j)(x·k_j) v_j
        return (sigma(x @ layer.Q.T) * (x @ layer.K.T)) @ layer.V
    return sigma(x @ layer.K.T) @ layer.V  # σ(x·k_j) v_j


def test_students_are_the_labelled_forms():
    """Each student computes the form and σ its label names, in the order of STUDENTS."""
    torch.manual_seed(3)
    layers = D.students(3, 4, 2)
    assert list(layers) == list(D.STUDENTS)
    x = torch.randn(10, 3, generator=torch.Generator().manual_seed(9), dtype=F64)
    classes = {"rank1": BilinearMLP, "gated": GatedMLP, "kv": KeyValueMLP}
    for label, layer in layers.items():
        form, act = D.STUDENTS[label]
        assert type(layer) is classes[form] and layer.activation.name == act
        assert (layer.d, layer.m, layer.d_out) == (3, 4, 2) and layer.V.dtype == F64
        with torch.no_grad():
            assert torch.allclose(layer(x), _reference_output(form, act, layer, x), rtol=1e-12, atol=1e-12)
    assert layers["symmetric ReLU"].rank == 1


def test_students_on_the_diagonal_draw_nothing_more():
    """diagonal=True sets k_j = q_j without a draw: the queries and the next draw match the plain students'."""
    torch.manual_seed(5)
    plain = D.students(3, 2, 1, labels=["SwiGLU", "bilinear"])
    after_plain = torch.rand(1)
    torch.manual_seed(5)
    diagonal = D.students(3, 2, 1, labels=["SwiGLU", "bilinear"], diagonal=True)
    assert torch.equal(torch.rand(1), after_plain)
    for label in plain:
        assert torch.equal(diagonal[label].Q, plain[label].Q)
        assert torch.equal(diagonal[label].K, diagonal[label].Q)
        assert D.diagonal_gap(diagonal[label]) == 0.0
    assert "ReLU MLP" not in D.students(2, 1, 1, diagonal=True)


def test_students_bad_labels():
    with pytest.raises(ValueError, match="labels: expected labels among"):
        D.students(2, 1, 1, labels=["SwiGLU", "swiglu"])
    with pytest.raises(TypeError, match="labels: expected a sequence of labels, got the str"):
        D.students(2, 1, 1, labels="SwiGLU")
    with pytest.raises(TypeError, match="layer: expected a form with queries"):
        D.students(2, 1, 1, labels=["ReLU MLP"], diagonal=True)
