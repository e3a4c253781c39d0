"""The forms, symmetries and kinds of verdict of the symmetry table, the Verdict record and the argument checks."""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from symbreak.decide import Decision

#: Forms of the table, in reading order.
FORMS: dict[str, str] = {
    "kv": "standard MLP",
    "rank1": "symmetric rank-1",
    "full": "full bilinear",
    "gated": "gated",
}
#: Symmetries of the table, in reading order.  ``kv_scale`` is ``k_j → α k_j``, ``v_j → v_j/α``
#: (``α > 0``), the rescaling that :data:`symbreak.dynamics.KEPT_RESCALINGS` calls ``"kv"``.
SYMMETRIES: dict[str, str] = {
    "exchange": "exchange q ↔ k",
    "scale_pos": "inverse scaling, α > 0",
    "scale_neg": "inverse scaling, α < 0",
    "parity": "parity x → −x",
    "gauge": "gauge GL(R)",
    "kv_scale": "rescaling (k, v), α > 0",
}
#: How a cell was decided, in the order the chapter counts them.
#: ``"proof"``: a proof on every sign cell of an expression that is not zero as written;
#: ``"matrix identity"``: the full form's score identity, for matrix symbols of every size ``d``
#: (and expanded at ``d = 2, 3, 4``), which holds for every σ;
#: ``"canonical form"``: the transformed coefficient is the same sympy expression as the original
#: once sympy writes both in its canonical form (``σ(b·a)`` against ``σ(a·b)``), no case split needed;
#: ``"counterexample"``: a rational counterexample; ``"n/a"``: the symmetry does not apply.
KINDS = ("proof", "matrix identity", "canonical form", "counterexample", "n/a")

a, b = sp.symbols("a b", real=True)
alpha_pos = sp.Symbol("alpha", positive=True)
alpha_neg = sp.Symbol("alpha", negative=True)


@dataclass(frozen=True)
class Verdict:
    """One cell of the symmetry table.

    ``holds`` is ``True``/``False``, or ``None`` where the symmetry does not
    apply to the form (``method == "n/a"``).  ``decision`` carries the proof or
    the counterexample; ``kind`` is one of :data:`KINDS`.
    """

    form: str
    symmetry: str
    activation: str
    holds: bool | None
    method: str
    decision: Decision | None = None
    kind: str = "n/a"

    @property
    def symbol(self) -> str:
        """``✓``, ``✓°`` (canonical form), ``✗`` or ``—`` for the table."""
        if self.holds is True and self.kind == "canonical form":
            return "✓°"
        return {True: "✓", False: "✗", None: "—"}[self.holds]


def _check_form(form: str) -> str:
    if form not in FORMS:
        raise ValueError(f"form: expected one of {list(FORMS)}, got {form!r}")
    return form


def _check_symmetry(symmetry: str) -> str:
    if symmetry not in SYMMETRIES:
        raise ValueError(f"symmetry: expected one of {list(SYMMETRIES)}, got {symmetry!r}")
    return symmetry
