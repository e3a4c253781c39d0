"""The layers compute the formulas of the book, and reject bad input clearly."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from helpers import ACTIVATIONS, inputs, seeds, sizes
from symbreak import activations as A
from symbreak.layers import (
    BilinearMLP,
    FullBilinearMLP,
    GatedMLP,
    GlobalQueryMLP,
    KeyValueMLP,
    SymmetrisedGatedMLP,
    tie_terms,
)
from symbreak.numerics import forward_error_bound, gamma


def _close(got: torch.Tensor, ref: torch.Tensor, bound: torch.Tensor) -> bool:
    return bool(((got - ref).abs() <= bound).all())


@given(d=sizes, m=sizes, d_out=sizes, seed=seeds, act=st.sampled_from(ACTIVATIONS))
def test_def_key_value_memory_sum_over_units(d, m, d_out, seed, act):
    """def-key-value-memory: σ(x Kᵀ) V = Σ_j σ(x·k_j) v_j."""
    torch.manual_seed(seed)
    layer = KeyValueMLP(d, m, d_out, activation=act, dtype=torch.float64)
    x = inputs(seed, 5, d)
    sigma = A.get(act)
    unit_sum = sum(sigma(x @ layer.K[j]).unsqueeze(-1) * layer.V[j] for j in range(m))
    # the unit sum is a second evaluation of the same exact function: two bounds
    assert _close(layer(x).detach(), unit_sum.detach(), 2 * forward_error_bound(layer, x))


@given(d=sizes, m=sizes, rank=st.integers(1, 4), seed=seeds, act=st.sampled_from(ACTIVATIONS))
def test_bilinear_score_is_quadratic_form(d, m, rank, seed, act):
    """def-bilinear-attention: the score of unit j is x W_j xᵀ with W_j = Σ_r q_{j,r}ᵀ k_{j,r}.

    The float32 layer is compared with an independent float64 computation
    through explicit ``W_j``.  Tolerance: the float32 bound ``β₃₂``, plus the
    float64 reference's own error, which sums ``d²`` terms instead of ``2d``
    and so is at most ``d`` times the float64 bound of the layer.
    """
    torch.manual_seed(seed)
    layer = BilinearMLP(d, m, rank=rank, activation=act)
    x = inputs(seed, 5, d).float()
    x64 = x.double()
    layer64 = BilinearMLP.from_weights(layer.Q.double(), layer.K.double(), layer.V.double(), activation=act)
    W = torch.stack([sum(torch.outer(layer64.Q[r, j], layer64.K[r, j]) for r in range(rank)) for j in range(m)])
    # two sums of the same `rank` products in different orders: each within γ_rank Σ_r |q_{j,r}|ᵀ|k_{j,r}|
    sizes64 = torch.einsum("rjd,rje->jde", layer64.Q.abs(), layer64.K.abs()).detach()
    assert bool(((layer64.unit_forms() - W).abs() <= 2 * gamma(rank, torch.float64) * sizes64).all())
    ref = A.get(act)(torch.einsum("nd,jde,ne->nj", x64, W, x64)) @ layer64.V
    bound = forward_error_bound(layer, x).double() + d * forward_error_bound(layer64, x64)
    assert _close(layer(x).detach().double(), ref.detach(), bound)


@given(d=sizes, m=sizes, seed=seeds)
def test_rank_d_expresses_any_unit_form(d, m, seed):
    """def-bilinear-attention: BilinearMLP(rank=d) realises any given W_j (q_{j,r} = e_r, k_{j,r} = W_j[r])."""
    g = torch.Generator().manual_seed(seed)
    W = torch.randn(m, d, d, generator=g, dtype=torch.float64)
    Q = torch.eye(d, dtype=torch.float64)[:, None, :].expand(d, m, d).clone()
    K = W.permute(1, 0, 2).clone()
    V = torch.randn(m, 2, generator=g, dtype=torch.float64)
    layer = BilinearMLP.from_weights(Q, K, V, activation="identity")
    torch.testing.assert_close(layer.unit_forms().detach(), W, rtol=0, atol=0)


@given(d=sizes, m=sizes, seed=seeds, act=st.sampled_from(ACTIVATIONS))
def test_gated_formula(d, m, seed, act):
    torch.manual_seed(seed)
    layer = GatedMLP(d, m, activation=act, dtype=torch.float64)
    x = inputs(seed, 5, d)
    sigma = A.get(act)
    ref = (sigma(x @ layer.Q.T) * (x @ layer.K.T)) @ layer.V
    assert _close(layer(x).detach(), ref.detach(), 2 * forward_error_bound(layer, x))


def test_shapes_and_defaults():
    x = torch.randn(2, 3, 4)
    assert KeyValueMLP(4, 5)(x).shape == (2, 3, 4)
    assert BilinearMLP(4, 5, d_out=7, rank=2)(x).shape == (2, 3, 7)
    assert GatedMLP(4, 5, 6)(x).shape == (2, 3, 6)
    assert BilinearMLP(4, 5).Q.shape == (1, 5, 4)
    assert KeyValueMLP(4, 5).activation.name == "relu"
    assert GatedMLP(4, 5).activation.name == "silu"
    assert BilinearMLP(4, 5).activation.name == "silu"
    assert [n for n, _ in GatedMLP(4, 5).named_parameters()] == ["Q", "K", "V"]


def test_from_weights_copies_and_keeps_values():
    Q, K, V = torch.randn(3, 2), torch.randn(3, 2), torch.randn(3, 4)
    layer = GatedMLP.from_weights(Q, K, V, activation="relu")
    assert torch.equal(layer.Q, Q) and torch.equal(layer.V, V) and layer.d_out == 4
    Q.zero_()
    assert not torch.equal(layer.Q, Q)
    bil = BilinearMLP.from_weights(K, K, V)
    assert bil.rank == 1 and bil.m == 3
    kv = KeyValueMLP.from_weights(K, V)
    assert (kv.m, kv.d, kv.d_out) == (3, 2, 4)


def test_callable_activation():
    layer = GatedMLP(3, 2, activation=torch.sin)
    x = torch.randn(4, 3)
    ref = (torch.sin(x @ layer.Q.T) * (x @ layer.K.T)) @ layer.V
    torch.testing.assert_close(layer(x), ref)


@pytest.mark.parametrize("cls", [KeyValueMLP, BilinearMLP, GatedMLP])
def test_wrong_input_width(cls):
    with pytest.raises(ValueError, match=r"x: expected last dimension d = 4, got shape \(2, 3\)"):
        cls(4, 5)(torch.randn(2, 3))
    with pytest.raises(TypeError, match="x: expected a torch.Tensor, got list"):
        cls(4, 5)([1.0, 2.0, 3.0, 4.0])


@pytest.mark.parametrize("cls", [KeyValueMLP, BilinearMLP, GatedMLP])
@pytest.mark.parametrize("arg", ["d", "m", "d_out"])
def test_sizes_below_one(cls, arg):
    kwargs = {"d": 4, "m": 5, "d_out": 3, arg: 0}
    with pytest.raises(ValueError, match=f"{arg}: expected an int >= 1, got 0"):
        cls(**kwargs)
    kwargs[arg] = 2.5
    with pytest.raises(TypeError, match=f"{arg}: expected a positive int, got float"):
        cls(**kwargs)


def test_rank_below_one():
    with pytest.raises(ValueError, match="rank: expected an int >= 1, got 0"):
        BilinearMLP(4, 5, rank=0)


def test_unknown_activation():
    with pytest.raises(ValueError, match="activation: expected one of"):
        GatedMLP(4, 5, activation="swishy")


def test_from_weights_mismatched_shapes():
    with pytest.raises(ValueError, match=r"K: expected the shape of Q \(3, 2\), got \(3, 4\)"):
        GatedMLP.from_weights(torch.randn(3, 2), torch.randn(3, 4), torch.randn(3, 2))
    with pytest.raises(ValueError, match=r"V: expected shape \(m=3, d_out\), got \(4, 2\)"):
        KeyValueMLP.from_weights(torch.randn(3, 2), torch.randn(4, 2))
    with pytest.raises(ValueError, match=r"Q: expected a 3-d tensor, got shape \(2, 3, 4, 5\)"):
        BilinearMLP.from_weights(torch.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 5), torch.randn(3, 2))
    with pytest.raises(TypeError, match="K: expected a torch.Tensor, got ndarray"):
        KeyValueMLP.from_weights(torch.randn(3, 2).numpy(), torch.randn(3, 2))


@given(d=sizes, m=sizes, seed=seeds, act=st.sampled_from(ACTIVATIONS))
def test_thm_query_absorbed(d, m, seed, act):
    """thm-query-absorbed: σ(x Q Kᵀ) V equals the key–value memory with K' = K Qᵀ."""
    torch.manual_seed(seed)
    layer = GlobalQueryMLP(d, m, activation=act, dtype=torch.float64)
    absorbed = layer.absorbed()
    x = inputs(seed, 6, d)
    with torch.no_grad():
        diff = (layer(x) - absorbed(x)).abs()
        # K' = fl(K Qᵀ) errs by γ_d |K||Q|ᵀ, so the absorbed scores x K'ᵀ err by at most
        # (2γ_d + γ_d²)(|x||Q|)|K|ᵀ — the score bound of the global-query layer itself;
        # the rest of the two computations is identical, so twice that layer's bound covers both
        bound = 2 * forward_error_bound(layer, x)
    assert bool((diff <= bound).all())


@given(d=sizes, m=sizes, seed=seeds, act=st.sampled_from(ACTIVATIONS))
def test_thm_static_query_rank_one_on_augmented_input(d, m, seed, act):
    """thm-static-query: the rank-1 form on x̃ = (1, x) with q_j = e₀, k_j = (0, k_j) is the key–value memory."""
    torch.manual_seed(seed)
    kv = KeyValueMLP(d, m, activation=act, dtype=torch.float64)
    e0 = torch.zeros(m, d + 1, dtype=torch.float64)
    e0[:, 0] = 1
    K = torch.cat([torch.zeros(m, 1, dtype=torch.float64), kv.K.detach()], dim=1)
    bil = BilinearMLP.from_weights(e0, K, kv.V.detach(), activation=act)
    x = inputs(seed, 6, d)
    x_aug = torch.cat([torch.ones(6, 1, dtype=torch.float64), x], dim=1)
    with torch.no_grad():
        diff = (bil(x_aug) - kv(x)).abs()
        bound = forward_error_bound(bil, x_aug) + forward_error_bound(kv, x)
    assert bool((diff <= bound).all())


def test_global_query_bad_input():
    with pytest.raises(ValueError, match=r"Q: expected shape \(d, d\) = \(3, 3\), got \(3, 2\)"):
        GlobalQueryMLP.from_weights(torch.zeros(3, 2), torch.zeros(4, 3), torch.zeros(4, 3))


# ------------------------------------------------------------- blocked evaluation without autograd


def _every_layer(d: int, m: int, act: str) -> list:
    from symbreak.layers import FullBilinearMLP

    return [
        KeyValueMLP(d, m, 2, activation=act, dtype=torch.float64),
        GlobalQueryMLP(d, m, 2, activation=act, dtype=torch.float64),
        BilinearMLP(d, m, 2, rank=1, activation=act, dtype=torch.float64),
        BilinearMLP(d, m, 2, rank=3, activation=act, dtype=torch.float64),
        GatedMLP(d, m, 2, activation=act, dtype=torch.float64),
        FullBilinearMLP(d, m, 2, activation=act, dtype=torch.float64),
        FullBilinearMLP(d, m, 2, activation=act, packed=True, dtype=torch.float64),
    ]


def _bound(layer, x: torch.Tensor) -> torch.Tensor:
    """The rounding bound of ``layer`` at ``x``; the full form is the key–value memory over its quadratic features."""
    from symbreak.layers import FullBilinearMLP

    if isinstance(layer, FullBilinearMLP):
        keys = layer.C if layer.packed else layer.W.flatten(1)
        return forward_error_bound(KeyValueMLP.from_weights(keys, layer.V, layer.activation), layer.features(x))
    return forward_error_bound(layer, x)


@given(seed=seeds, d=sizes, m=sizes, act=st.sampled_from(ACTIVATIONS), block=st.integers(1, 40))
def test_blocked_forward_is_the_plain_formula(seed, d, m, act, block, monkeypatch_module):
    """Without autograd a large batch is evaluated in blocks of rows; the result is ``h(x) V`` of the whole batch.

    The block size is shrunk so that a small batch is cut into many blocks, some
    of them short.  Both sides compute each row by the same operations, so they
    agree within the sum of their rounding-error bounds (in practice bit for bit).
    """
    import symbreak.layers._base as L

    monkeypatch_module.setattr(L, "_BLOCK_NUMBERS", block)
    torch.manual_seed(seed % 2**31)
    x = inputs(seed, 37, d).reshape(1, 37, d)
    for layer in _every_layer(d, m, act):
        with torch.no_grad():
            blocked = layer(x)
            plain = layer.hidden(x) @ layer.V
            bound = 2 * _bound(layer, x)
        assert blocked.shape == plain.shape == (1, 37, 2)
        assert bool(((blocked - plain).abs() <= bound).all()), type(layer).__name__
        if hasattr(layer, "features"):  # the full form's scores are blocked too
            with torch.no_grad():
                keys = layer.C if layer.packed else layer.W.flatten(1)
                direct = layer.features(x) @ keys.T
                kv = KeyValueMLP.from_weights(keys, torch.eye(layer.m, dtype=torch.float64), "identity")
                score_bound = 2 * forward_error_bound(kv, layer.features(x))
            assert bool(((layer.scores(x) - direct).abs() <= score_bound).all())
    # with autograd recording, the batch is never cut: gradients flow through one graph
    layer = _every_layer(d, m, act)[3]
    y = layer(x)
    assert y.grad_fn is not None and "Cat" not in y.grad_fn.name()


# ---------------------------------------------------------------------------
# the gated rank-R form as a wide gated MLP with tied values (prop-gated-rank-R)


@given(d=sizes, m=sizes, R=st.integers(1, 4), seed=seeds, act=st.sampled_from(ACTIVATIONS))
def test_from_terms_is_the_gated_rank_R_sum(d, m, R, seed, act):
    """prop-gated-rank-R: ``GatedMLP.from_terms(Q, K, V)`` computes ``Σ_j Σ_r σ(x·q_{j,r})(x·k_{j,r}) v_j``.

    The reference is eq-gated-rank-R summed unit by unit and term by term in
    float64; both sums are bounded by the wide layer's rounding bound β(x) (any
    order of the ``Rm`` terms), so they agree within 2β.  Weights and inputs come
    from two independent generators.
    """
    weights = torch.Generator().manual_seed(seed)
    Q, K = torch.randn(2, R, m, d, generator=weights, dtype=torch.float64)
    V = torch.randn(m, 3, generator=weights, dtype=torch.float64)
    x = inputs(seed + 1, 5, d)
    wide = GatedMLP.from_terms(Q, K, V, act)
    sigma = A.resolve(act)
    expected = torch.zeros(5, 3, dtype=torch.float64)
    for j in range(m):
        for r in range(R):
            expected += (sigma(x @ Q[r, j]) * (x @ K[r, j]))[:, None] * V[j]
    with torch.no_grad():
        assert _close(wide(x), expected, 2 * forward_error_bound(wide, x))
    assert (wide.m, wide.d, wide.d_out) == (R * m, d, 3)
    for r in range(R):  # unit (r, j) is row (r − 1)m + j, and the R units of unit j share v_j
        for j in range(m):
            assert torch.equal(wide.Q[r * m + j], Q[r, j]) and torch.equal(wide.K[r * m + j], K[r, j])
            assert torch.equal(wide.V[r * m + j], V[j])


def test_tie_terms_shapes_and_bad_input():
    Q = torch.arange(24.0).reshape(2, 3, 4)
    Q_bar, K_bar, V_bar = tie_terms(Q, -Q, torch.ones(3, 5))
    assert Q_bar.shape == K_bar.shape == (6, 4) and V_bar.shape == (6, 5)
    assert torch.equal(Q_bar[4], Q[1, 1]) and torch.equal(K_bar[4], -Q[1, 1])
    with pytest.raises(ValueError, match=r"Q: expected a 3-d tensor, got shape \(3, 4\)"):
        tie_terms(torch.zeros(3, 4), torch.zeros(3, 4), torch.zeros(3, 1))
    with pytest.raises(ValueError, match=r"K: expected the shape of Q \(2, 3, 4\), got \(2, 3, 5\)"):
        GatedMLP.from_terms(Q, torch.zeros(2, 3, 5), torch.zeros(3, 1))
    with pytest.raises(ValueError, match=r"V: expected shape \(m=3, d_out\), got \(6, 1\)"):
        GatedMLP.from_terms(Q, Q, torch.zeros(6, 1))
    with pytest.raises(TypeError, match="V: expected a torch.Tensor, got list"):
        tie_terms(Q, Q, [[1.0]])


def _reference_gradients(Q, K, V, x, act):
    """∂/∂(Q, K, V, x) of Σ f(x) for f(x) = Σ_j σ(Σ_r (x·q_{j,r})(x·k_{j,r})) v_j, by autograd through einsum."""
    leaves = [t.detach().clone().requires_grad_(True) for t in (Q, K, V, x)]
    q, k, v, xx = leaves
    score = torch.einsum("nd,rjd,ne,rje->nj", xx, q, xx, k)
    torch.einsum("nj,je->ne", A.get(act)(score), v).sum().backward()
    return [t.grad for t in leaves]


@pytest.mark.parametrize("rank", [1, 3])
@pytest.mark.parametrize("act", ["silu", "relu", "identity"])
def test_rank_R_backward_is_the_gradient_of_the_formula(rank, act):
    """The backward pass of the rank-R scores (``_Scores``, writing into one tensor) against einsum's autograd.

    float64; the two differ only by rounding.  Tolerance (a convention): 1e-10 of the largest gradient entry,
    about 10⁵ times the expected rounding of sums of ``2Rd ≤ 60`` terms at unit roundoff 1.1e-16.
    """
    torch.manual_seed(3)
    layer = BilinearMLP(5, 7, 4, rank=rank, activation=act, dtype=torch.float64)
    x = inputs(11, 6, 5).requires_grad_(True)
    layer(x).sum().backward()
    got = [layer.Q.grad, layer.K.grad, layer.V.grad, x.grad]
    for g, want in zip(got, _reference_gradients(layer.Q, layer.K, layer.V, x, act), strict=True):
        assert torch.allclose(g, want, rtol=0, atol=1e-10 * want.abs().max().item())


def test_rank_R_backward_is_differentiable_twice():
    """Hessians need the backward recorded (``create_graph``): torch's second-order numerical check."""
    torch.manual_seed(4)
    layer = BilinearMLP(3, 4, 2, rank=2, activation="silu", dtype=torch.float64)
    x = inputs(5, 3, 3).requires_grad_(True)
    params = {name: p.detach().clone().requires_grad_(True) for name, p in layer.named_parameters()}

    def f(x, Q, K, V):
        return torch.func.functional_call(layer, {"Q": Q, "K": K, "V": V}, (x,))

    args = (x, params["Q"], params["K"], params["V"])
    assert torch.autograd.gradcheck(f, args) and torch.autograd.gradgradcheck(f, args)


def test_gated_factors_exchange_exactly_and_gradients_are_the_formulas():
    """Two products of one shape: swapping Q and K swaps the computed factors bit for bit (float32);
    the gradients are those of (σ(x Qᵀ) ⊙ x Kᵀ) V through one einsum (float64, the tolerance above)."""
    torch.manual_seed(5)
    layer = GatedMLP(6, 9, 4)
    x = torch.randn(8, 6, generator=torch.Generator().manual_seed(6))
    a, b = layer.factors(x)
    b2, a2 = GatedMLP.from_weights(layer.K.detach(), layer.Q.detach(), layer.V.detach()).factors(x)
    assert torch.equal(a, a2) and torch.equal(b, b2)
    layer = GatedMLP(6, 9, 4, activation="gelu", dtype=torch.float64)
    x = inputs(7, 8, 6).requires_grad_(True)
    layer(x).sum().backward()
    leaves = [t.detach().clone().requires_grad_(True) for t in (layer.Q, layer.K, layer.V, x)]
    q, k, v, xx = leaves
    (torch.einsum("nj,nj,je->ne", A.get("gelu")(xx @ q.T), torch.einsum("nd,jd->nj", xx, k), v)).sum().backward()
    for g, want in zip([layer.Q.grad, layer.K.grad, layer.V.grad, x.grad], [t.grad for t in leaves], strict=True):
        assert torch.allclose(g, want, rtol=0, atol=1e-10 * want.abs().max().item())


# Review of the package's use outside the book: autocast, hooks, dtypes, devices, tracing.

_FORMS = [KeyValueMLP, GlobalQueryMLP, BilinearMLP, FullBilinearMLP, GatedMLP, SymmetrisedGatedMLP]


def _weights(cls, m: int = 3, d: int = 2, **kw) -> tuple[torch.Tensor, ...]:
    """Tensors for ``cls.from_weights`` (keyword arguments go to ``torch.empty``)."""
    shapes = {
        KeyValueMLP: [(m, d), (m, d)],
        GlobalQueryMLP: [(d, d), (m, d), (m, d)],
        BilinearMLP: [(1, m, d), (1, m, d), (m, d)],
        FullBilinearMLP: [(m, d, d), (m, d)],
        GatedMLP: [(m, d), (m, d), (m, d)],
        SymmetrisedGatedMLP: [(m, d), (m, d), (m, d)],
    }[cls]
    return tuple(torch.ones(shape, **kw) for shape in shapes)


@pytest.mark.parametrize("cls", [GatedMLP, BilinearMLP, KeyValueMLP, FullBilinearMLP])
def test_a_large_batch_under_autocast_no_grad(cls):
    """Under autocast the blocked evaluation had allocated its output in float32 while the products are bfloat16
    ("Expected out tensor to have dtype BFloat16"); the float path is unchanged (checked by the tests above)."""
    layer = cls(8, 256, 8) if cls is not FullBilinearMLP else cls(8, 2048, 8)
    x = torch.randn(9000, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        whole = layer(x)  # gradients on: one product, no blocks
        with torch.no_grad():
            blocked = layer(x)
    assert blocked.dtype == whole.dtype == torch.bfloat16
    assert torch.allclose(blocked.float(), whole.detach().float(), rtol=0.02, atol=0.02)


def test_a_hook_on_the_gate_sees_the_gate_and_a_boolean_gate_works(monkeypatch):
    """The gate had been overwritten in place by σ(a) ⊙ b under no_grad, which a forward hook on an nn.SiLU saw,
    and a gate of another dtype (``z > 0``) could not be overwritten ("result type Float can't be cast")."""
    from symbreak.layers import _base

    monkeypatch.setattr(_base, "_BLOCK_NUMBERS", 2**22)  # one block (another test makes them small)
    silu, seen = torch.nn.SiLU(), []
    silu.register_forward_hook(lambda module, args, out: seen.append(out))
    layer = GatedMLP(4, 8, activation=silu)
    x = torch.randn(3, 4)
    with torch.no_grad():
        y = layer(x)
    assert torch.equal(seen[0], torch.nn.functional.silu(x @ layer.Q.T))
    assert torch.equal(y, GatedMLP.from_weights(layer.Q, layer.K, layer.V, "silu")(x).detach())
    step = GatedMLP.from_weights(layer.Q, layer.K, layer.V, lambda z: z > 0)
    with torch.no_grad():
        assert torch.equal(step(x), ((x @ layer.Q.T > 0) * (x @ layer.K.T)) @ layer.V)


def test_the_package_re_exports_every_public_name_of_its_modules():
    import importlib

    import symbreak.layers as L

    for module in ("_base", "memory", "bilinear", "gated", "symmetrised"):
        public = set(importlib.import_module(f"symbreak.layers.{module}").__all__) - {"ActivationLike", "DType"}
        assert public <= set(L.__all__), (module, public - set(L.__all__))
    assert L.SymmetrisedGatedMLP is SymmetrisedGatedMLP


def test_bad_dtypes_are_refused_by_name():
    with pytest.raises(TypeError, match=r"x: expected dtype torch.float32 \(the layer's\), got torch.float64"):
        GatedMLP(4, 8)(torch.ones(4, dtype=torch.float64))
    with pytest.raises(TypeError, match="x: expected dtype torch.float64"):
        BilinearMLP(4, 8, dtype=torch.float64)(torch.ones(2, 4))
    with pytest.raises(TypeError, match="x: expected dtype"):
        FullBilinearMLP(4, 8)(torch.ones(2, 4, dtype=torch.float64))
    with pytest.raises(TypeError, match="dtype: expected a floating-point torch.dtype or None, got 'float64'"):
        GatedMLP(4, 4, dtype="float64")
    with pytest.raises(TypeError, match="dtype: expected a floating-point torch.dtype or None, got torch.int64"):
        KeyValueMLP(4, 4, dtype=torch.int64)
    with pytest.raises(TypeError, match="K: expected a floating-point tensor, got dtype torch.int64"):
        KeyValueMLP.from_weights(torch.tensor([[1, 0], [0, 1]]), torch.tensor([[2], [3]]))
    with pytest.raises(TypeError, match="V: expected a floating-point tensor"):
        GatedMLP.from_weights(torch.ones(2, 2), torch.ones(2, 2), torch.ones(2, 2, dtype=torch.int32))


def test_other_dtypes_pass_where_torch_computes_them():
    """A float16 layer takes float16 inputs; under autocast the input's dtype is autocast's business; the packed
    features of a float64 input are computed as before."""
    half = GatedMLP(4, 8, dtype=torch.float16)
    assert half(torch.ones(2, 4, dtype=torch.float16)).dtype == torch.float16
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert GatedMLP(4, 8)(torch.ones(2, 4, dtype=torch.bfloat16)).dtype == torch.bfloat16
    assert FullBilinearMLP(3, 2, packed=True).features(torch.ones(1, 3, dtype=torch.float64)).dtype == torch.float64


def test_sizes_may_be_integer_likes_but_not_bools():
    import numpy as np

    assert GatedMLP(np.int64(16), 4).d == 16 and type(GatedMLP(np.int64(16), 4).d) is int
    assert BilinearMLP(4, np.int32(3), rank=np.int64(2)).rank == 2
    with pytest.raises(TypeError, match=r"d: expected a positive int, got bool"):
        GatedMLP(True, 4)
    with pytest.raises(TypeError, match=r"m: expected a positive int, got float"):
        GatedMLP(4, 4.0)


@pytest.mark.parametrize("cls", _FORMS)
def test_from_weights_keeps_the_device_dtype_and_draws(cls):
    """The layer lives on its weights' device (meta: there is no GPU here) in their dtype, and draws from torch's
    global generator as many numbers as the constructor does (as it always did, which its docstring says)."""
    torch.manual_seed(0)
    cpu = cls.from_weights(*_weights(cls, dtype=torch.float64))
    after = torch.randn(1)
    torch.manual_seed(0)
    meta = cls.from_weights(*_weights(cls, dtype=torch.float64, device="meta"))
    assert torch.equal(torch.randn(1), after)
    assert {p.device.type for p in meta.parameters()} == {"meta"}
    assert {p.dtype for p in [*meta.parameters(), *cpu.parameters()]} == {torch.float64}
    assert "global generator" in cls.from_weights.__doc__


@pytest.mark.parametrize("cls", _FORMS)
def test_from_weights_is_annotated_with_its_own_class(cls):
    """The API page had read "SymmetrisedGatedMLP.from_weights(…) → GatedMLP" (the inherited annotation)."""
    import inspect

    assert inspect.signature(cls.from_weights).return_annotation == "Self"


# tracing is what the test exercises: torch's deprecation of jit.trace and its notes on Python branches are expected
@pytest.mark.filterwarnings("ignore::DeprecationWarning:torch.jit", "ignore::torch.jit.TracerWarning")
@pytest.mark.parametrize("cls", _FORMS)
@pytest.mark.parametrize("grad", [True, False])
def test_jit_trace_traces_every_layer(cls, grad, monkeypatch):
    """What the package's docstring says of torch.jit.trace: it had failed ("Graphs differed across invocations")
    on GatedMLP (gate.mul_ or gate * b) and BilinearMLP (its autograd Function) with gradients on."""
    from symbreak.layers import _base

    monkeypatch.setattr(_base, "_BLOCK_NUMBERS", 2**22)  # a batch of 5 fits one block (another test makes them small)
    torch.manual_seed(0)
    layer = cls(4, 8)
    x = torch.randn(3, 4)
    with torch.set_grad_enabled(grad):
        traced = torch.jit.trace(layer, torch.randn(5, 4))
        assert torch.equal(traced(x), layer(x))
