"""What each form costs: parameters, FLOPs and activation memory, as sympy formulas.

Sizes are the symbols ``d`` (model width), ``m`` (units), ``d_out`` (output
width) and ``R`` (rank).  Counts are per layer (parameters) or per token
(FLOPs, memory); a multiply–add counts as 2 FLOPs.  The formulas are also
evaluated for real models (:data:`MODELS`, whose own forms :data:`MODEL_FORMS`
names) with :func:`evaluate`; :func:`overhead` compares two forms and
:func:`at_ratio` writes a share in terms of ``ρ = m/d``.

The forms:

* ``kv`` — ``σ(x Kᵀ) V``, the standard MLP;
* ``global_query`` — ``σ(x Q Kᵀ) V`` with one global ``Q ∈ R^{d×d}``;
* ``rank1`` — ``σ((x Qᵀ) ⊙ (x Kᵀ)) V``, the symmetric rank-1 form;
* ``rankR`` — ``σ(Σ_r (x Q_rᵀ) ⊙ (x K_rᵀ)) V``;
* ``gated`` — ``(σ(x Qᵀ) ⊙ (x Kᵀ)) V``;
* ``full`` — ``Σ_j σ(x Q_j K_jᵀ xᵀ) v_j`` with ``Q_j, K_j ∈ R^{d×d}``;
* ``full_packed`` — the full form stored as ``sym(W_j)``: ``d(d+1)/2`` numbers per unit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy as sp

__all__ = [
    "d",
    "m",
    "d_out",
    "R",
    "rho",
    "FORMS",
    "Form",
    "parameters",
    "flops",
    "memory",
    "map_parameters",
    "overhead",
    "at_ratio",
    "evaluate",
    "MODELS",
    "MODEL_FORMS",
    "sweep",
    "latex_count",
    "FULL_FEATURES",
    "matmul_flops",
    "saved_per_token",
    "counted_elementwise",
    "power_law_exponent",
]

#: The sizes of the cost formulas as sympy symbols: input width ``d``, units ``m``, output width ``d_out``, rank ``R``.
d, m, d_out, R = sp.symbols("d m d_out R", positive=True, integer=True)
#: Units per input dimension, ``ρ = m/d`` (for :func:`at_ratio`).
rho = sp.Symbol("rho", positive=True)


@dataclass(frozen=True)
class Form:
    """The cost formulas of one form; its FLOPs are the matrix products plus the elementwise work."""

    name: str
    description: str
    parameters: sp.Expr
    matmul_flops: sp.Expr
    elementwise_flops: sp.Expr
    memory: sp.Expr
    #: whether :attr:`flops` is written as the products with ``V`` plus ``m`` times one unit's score work
    per_unit: bool = False

    @property
    def flops(self) -> sp.Expr:
        """Forward FLOPs per token: :attr:`matmul_flops` plus :attr:`elementwise_flops`."""
        total = self.matmul_flops + self.elementwise_flops
        if self.per_unit:
            return _value_flops + m * sp.expand((total - _value_flops) / m)
        return total


_value_params = m * d_out
_value_flops = 2 * m * d_out
_packed = d * (d + 1) / 2

#: Per form: parameters, FLOPs in matrix products (as the package's layer evaluates them; σ itself
#: is not counted), the elementwise rest (products of factors, sums of terms, x ⊗ x features), memory.
FORMS: dict[str, Form] = {
    f.name: f
    for f in [
        Form("kv", "standard MLP σ(x Kᵀ) V", m * d + _value_params, 2 * m * d + _value_flops, 0, 2 * m),
        Form(
            "global_query",
            "one global query map σ(x Q Kᵀ) V",
            d**2 + m * d + _value_params,
            2 * d**2 + 2 * m * d + _value_flops,
            0,
            d + 2 * m,
        ),
        Form(
            "rank1",
            "symmetric rank-1 σ((x Qᵀ)⊙(x Kᵀ)) V",
            2 * m * d + _value_params,
            4 * m * d + _value_flops,
            m,
            4 * m,
        ),
        Form(
            "rankR",
            "rank-R σ(Σ_r (x Q_rᵀ)⊙(x K_rᵀ)) V",
            2 * R * m * d + _value_params,
            4 * R * m * d + _value_flops,
            (2 * R - 1) * m,
            2 * R * m + 2 * m,
        ),
        Form("gated", "gated (σ(x Qᵀ)⊙(x Kᵀ)) V", 2 * m * d + _value_params, 4 * m * d + _value_flops, m, 4 * m),
        Form(
            "full",
            "full bilinear Σ_j σ(x Q_j K_jᵀ xᵀ) v_j",
            2 * m * d**2 + _value_params,
            4 * m * d**2 + _value_flops,
            2 * m * d,
            2 * m * d + 2 * m,
            per_unit=True,
        ),
        Form(
            "full_packed",
            "full form as sym(W_j) over packed x⊗x features",
            m * _packed + _value_params,
            2 * m * _packed + _value_flops,
            _packed,
            _packed + 2 * m,
        ),
    ]
}


def _form(form: str, argument: str = "form") -> Form:
    if not isinstance(form, str):
        raise TypeError(f"{argument}: expected a form name (str), got {type(form).__name__}")
    if form not in FORMS:
        raise ValueError(f"{argument}: expected one of {list(FORMS)}, got {form!r}")
    return FORMS[form]


def parameters(form: str) -> sp.Expr:
    """Number of parameters of ``form``, as a formula in ``d, m, d_out, R``."""
    return _form(form).parameters


def flops(form: str) -> sp.Expr:
    """Forward FLOPs per token of ``form`` (multiply–add = 2), as a formula."""
    return _form(form).flops


def memory(form: str) -> sp.Expr:
    """Hidden numbers per token that the forward pass materialises (kept for backward)."""
    return _form(form).memory


def map_parameters(form: str) -> sp.Expr:
    """Parameters of ``form`` without its values ``V``: :func:`parameters` minus ``m d_out``.

    What the units spend on comparing the token: ``md`` keys for ``kv``, ``2md``
    for ``q_j, k_j`` in ``rank1`` and ``gated``, ``2md²`` for the maps
    ``Q_j, K_j ∈ R^{d×d}`` of ``full``.
    """
    return sp.expand(parameters(form) - _value_params)


def overhead(form: str, base: str = "kv") -> dict[str, sp.Expr]:
    """What ``form`` costs beyond ``base``, simplified: ``{"parameters", "flops", "relative"}``.

    ``parameters`` is ``P_form − P_base``, ``flops`` is ``F_form − F_base`` (per
    token) and ``relative`` is ``(P_form − P_base) / P_base``.  For a global query
    map over the key–value memory: ``d²``, ``2d²`` and ``d² / (m (d + d_out))``.
    """
    new, old = _form(form), _form(base, "base")
    extra = sp.simplify(new.parameters - old.parameters)
    return {
        "parameters": extra,
        "flops": sp.simplify(new.flops - old.flops),
        "relative": sp.simplify(extra / old.parameters),
    }


def at_ratio(expr: sp.Expr) -> sp.Expr:
    """``expr`` with ``d_out = d`` and ``m = ρ d`` (:data:`rho` units per input dimension), simplified.

    A relative cost that depends on the sizes only through ``m/d`` becomes a
    function of ``ρ`` alone, e.g. ``d² / (m (d + d_out)) → 1/(2ρ)``.
    """
    if not isinstance(expr, sp.Basic):
        raise TypeError(f"expr: expected a sympy expression, got {type(expr).__name__}")
    return sp.simplify(expr.subs(d_out, d).subs(m, rho * d))


def evaluate(expr: sp.Expr, **sizes: int) -> int:
    """``expr`` at the given sizes (``d``, ``m``, ``d_out`` — default ``d`` — and ``R``), as an int."""
    allowed = {"d": d, "m": m, "d_out": d_out, "R": R}
    for key, value in sizes.items():
        if key not in allowed:
            raise ValueError(f"sizes: expected keys among {list(allowed)}, got {key!r}")
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{key}: expected an int >= 1, got {value!r}")
    sizes.setdefault("d_out", sizes.get("d", 0) or None)
    subs = {allowed[k]: v for k, v in sizes.items() if v is not None}
    value = sp.sympify(expr).subs(subs)
    if value.free_symbols:
        missing = sorted(s.name for s in value.free_symbols)
        raise ValueError(f"sizes: expected values for {missing}, got {sorted(sizes)}")
    return int(value)


#: Published sizes of real feed-forward blocks: model width ``d`` and hidden width ``m``.
MODELS: dict[str, dict[str, int]] = {
    "LLaMA-7B": {"d": 4096, "m": 11008},
    "T5-base (ReLU)": {"d": 768, "m": 3072},
    "T5-base (GLU variants)": {"d": 768, "m": 2048},
}

#: The form of each model's own feed-forward layer in :data:`MODELS` (a key of :data:`FORMS`).
MODEL_FORMS: dict[str, str] = {
    "LLaMA-7B": "gated",
    "T5-base (ReLU)": "kv",
    "T5-base (GLU variants)": "gated",
}


def sweep(expr: sp.Expr, widths: Sequence[int], units_per_width: int = 4, rank: int | None = None) -> list[int]:
    """``expr`` at ``d = w``, ``m = units_per_width · w``, ``d_out = w`` (and ``R = rank``) for each width ``w``.

    The usual transformer proportions are ``m = 4d`` (LLaMA's gated layers use
    about ``8d/3``).  Returns one int per width, via :func:`evaluate`.
    """
    if isinstance(widths, (str, bytes)) or not isinstance(widths, Sequence):
        raise TypeError(f"widths: expected a sequence of ints, got {type(widths).__name__}")
    if not widths:
        raise ValueError("widths: expected at least one width, got an empty sequence")
    if isinstance(units_per_width, bool) or not isinstance(units_per_width, int) or units_per_width < 1:
        raise ValueError(f"units_per_width: expected an int >= 1, got {units_per_width!r}")
    extra = {} if rank is None else {"R": rank}
    return [evaluate(expr, d=w, m=units_per_width * w, **extra) for w in widths]


def latex_count(value: int | float, digits: int = 2, *, unicode: bool = False) -> str:
    """``value`` as inline LaTeX ``$a \\cdot 10^{b}$`` with ``1 ≤ a < 10`` given to ``digits`` decimals.

    For example ``latex_count(369367187456)`` is ``"$3.69 \\cdot 10^{11}$"``;
    when the exponent ``b`` is 0 the power of ten is left out.  With
    ``unicode=True`` the same number is plain text, ``"3.69·10¹¹"``, for
    places that do not typeset LaTeX (a ``{glue:md}`` role in running text).
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"value: expected a real number, got {type(value).__name__} ({value!r})")
    if not value > 0 or value == float("inf"):
        raise ValueError(f"value: expected a finite positive number, got {value!r}")
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 0:
        raise ValueError(f"digits: expected an int >= 0, got {digits!r}")
    if not isinstance(unicode, bool):
        raise TypeError(f"unicode: expected a bool, got {type(unicode).__name__} ({unicode!r})")
    mantissa, exponent = format(value, f".{digits}e").split("e")
    exponent_value = int(exponent)
    if unicode:
        power = str(exponent_value).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
        return mantissa if exponent_value == 0 else f"{mantissa}·10{power}"
    if exponent_value == 0:
        return f"${mantissa}$"
    return f"${mantissa} \\cdot 10^{{{exponent_value}}}$"


#: The full form stored by its matrices ``W_j`` and evaluated over the ``d²`` features ``x ⊗ x``
#: (``FullBilinearMLP`` unpacked), beside the two routes in :data:`FORMS` (``full``: the maps
#: ``Q_j, K_j``; ``full_packed``: ``sym(W_j)`` over the ``d(d+1)/2`` products ``x_a x_b``, ``a ≤ b``).
FULL_FEATURES = Form(
    "full_features",
    "full form stored as W_j, over x⊗x features",
    m * d**2 + _value_params,
    2 * m * d**2 + _value_flops,
    d**2,
    d**2 + 2 * m,
)


def matmul_flops(form: str) -> sp.Expr:
    """FLOPs per token spent in matrix products by the package's layer for ``form`` (multiply–add = 2).

    ``kv``: ``2md + 2m d_out``; ``global_query``: ``2d² + 2md + 2m d_out``;
    ``rank1`` and ``gated``: ``4md + 2m d_out`` (one product to the ``2m``
    factors); ``rankR``: ``4Rmd + 2m d_out``; ``full``: ``4md² + 2m d_out``, the
    maps route of ``BilinearMLP(rank=d)``; ``full_features`` (see
    :data:`FULL_FEATURES`): ``2md² + 2m d_out``, the ``d²`` features ``x ⊗ x``
    times the flattened ``W_j``; ``full_packed``: ``m d(d+1) + 2m d_out``.  The
    rest of :func:`flops` is the form's elementwise work (σ itself is not counted).
    """
    if form == "full_features":
        return FULL_FEATURES.matmul_flops
    if isinstance(form, str) and form not in FORMS:
        raise ValueError(f"form: expected one of {[*FORMS, 'full_features']}, got {form!r}")
    return _form(form).matmul_flops


def _saved_numbers(layer, x) -> int:
    """Numbers in the distinct storages autograd saves during ``layer(x)``, except parameters, buffers and ``x``."""
    import torch

    exclude = {t.untyped_storage().data_ptr() for t in (*layer.parameters(), *layer.buffers(), x)}
    sizes: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        if storage.data_ptr() not in exclude:
            sizes[storage.data_ptr()] = storage.nbytes() // t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        layer(x)
    return sum(sizes.values())


def saved_per_token(layer, x) -> float:
    """Numbers per token that the forward pass of ``layer`` keeps for the backward pass, measured.

    With ``N(x)`` the numbers in the distinct tensors autograd saves during
    ``layer(x)`` (each storage once; parameters, buffers and the input itself
    excluded), the result is ``(N([x; x]) − N(x)) / n`` for a batch ``x`` of
    ``n`` tokens: the part that grows with the batch, so that copies of the
    weights made once per call (e.g. ``Q`` and ``K`` concatenated) drop out.
    Compare with :func:`memory`.  Whether ``x.requires_grad`` is set matters
    (with it, products of ``x`` with itself keep their factors).
    """
    import torch

    if not isinstance(layer, torch.nn.Module):
        raise TypeError(f"layer: expected a torch.nn.Module, got {type(layer).__name__}")
    if not isinstance(x, torch.Tensor) or x.ndim != 2 or x.shape[0] < 1:
        shape = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
        raise ValueError(f"x: expected a 2-d tensor (n, d) with n >= 1 tokens, got {shape}")
    doubled = torch.cat([x, x]).detach().requires_grad_(x.requires_grad)
    return (_saved_numbers(layer, doubled) - _saved_numbers(layer, x)) / x.shape[0]


#: FLOPs per output entry of the elementwise aten calls :func:`counted_elementwise` counts.
ELEMENTWISE_COST = {"aten.mul.Tensor": 1, "aten.add.Tensor": 1, "aten.sub.Tensor": 1, "aten.addcmul.default": 2}


def counted_elementwise(run, n: int) -> int:
    """The elementwise FLOPs per token that ``run()`` performs, counted call by call at torch's dispatcher.

    Each ``mul``, ``add`` or ``sub`` counts 1 per output entry and each ``addcmul`` (a multiply–add) 2
    (``ELEMENTWISE_COST``); matrix products, copies and σ are not counted.  ``n`` is the number of
    tokens ``run`` evaluates; the total is divided by it (integer division).  Compare with
    ``flops(form) − matmul_flops(form)``.
    """
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    if not callable(run):
        raise TypeError(f"run: expected a callable, got {type(run).__name__}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n: expected an int >= 1, got {n!r}")
    total = [0]

    class _Counter(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if isinstance(out, torch.Tensor):
                total[0] += ELEMENTWISE_COST.get(str(func), 0) * out.numel()
            return out

    with _Counter():
        run()
    return total[0] // n


def power_law_exponent(sizes: Sequence[float], values: Sequence[float]) -> float:
    """The slope ``b`` of the least-squares line ``log y = a + b log s`` through the points ``(sizes, values)``.

    For ``y = c s^b`` exactly this is ``b``; for a polynomial cost it tends to the
    polynomial's degree as the sizes grow.
    """
    import numpy as np

    s = np.asarray(sizes, dtype=float)
    y = np.asarray(values, dtype=float)
    if s.ndim != 1 or s.shape != y.shape or s.size < 2:
        raise ValueError(f"sizes, values: expected two 1-d sequences of equal length >= 2, got {s.shape} and {y.shape}")
    if not ((s > 0).all() and (y > 0).all()):
        raise ValueError("sizes, values: expected positive numbers for a log–log fit, got a value <= 0")
    if np.ptp(np.log(s)) == 0:
        raise ValueError("sizes: expected at least two distinct sizes, got one size repeated")
    return float(np.polyfit(np.log(s), np.log(y), 1)[0])
