"""Chapter 11 (conservation laws): its tables and glued values, from results computed elsewhere.

Each function takes what the chapter's visible cells computed (symbolic checks, tracks, histories,
sweeps) and arranges it: a Markdown table glued under its name or a block of glued values.  The
chapter's four figures are in :mod:`symbreak.pages.ch11_figures`, which names the layers and charges
as this module does (:func:`student_name`, :func:`shown`).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping, Sequence

import sympy as sp
import torch

from symbreak.activations import display_name
from symbreak.coarse import below_share, percent
from symbreak.decide import Decision
from symbreak.dynamics import STUDENTS, History, StepSweep, by_law, drift_and_allowance, train
from symbreak.experiments.models import FORMS as PART_V_FORMS
from symbreak.plotting import formula_cell, scientific
from symbreak.prose import glue_all, glue_table
from symbreak.symbolic import decision_text, euler_defect
from symbreak.symbolic.conservation import GeneratorCheck

__all__ = [
    "PAIRS",
    "form_name",
    "student_name",
    "shown",
    "glue_generator_table",
    "glue_euler_table",
    "glue_track_setting",
    "glue_identity_table",
    "glue_train_setting",
    "glue_drift_table",
    "law_cases",
    "glue_step_sweeps",
    "glue_weight_decay",
    "glue_optimizers",
]

#: The two charges as table cells (``\lVert``, which a Markdown table does not split at ``|``).
PAIRS = {
    "qk": r"$\lVert q_j\rVert^2 - \lVert k_j\rVert^2$",
    "kv": r"$\lVert k_j\rVert^2 - \lVert v_j\rVert^2$",
}
_z, _phi, _s = sp.Symbol("z", real=True), sp.Function("phi"), sp.Function("s")
#: The Euler defects as the proof of ``thm-conservation`` writes them, with their functions: ``z² φ(z)`` with the
#: standard normal density φ, and ``z² s(z)(1 − s(z))`` with the logistic sigmoid s (checked against E when shown).
_PROOF_FORMS = {
    "gelu": (_z**2 * _phi(_z), {_phi(_z): sp.exp(-(_z**2) / 2) / sp.sqrt(2 * sp.pi)}),
    "silu": (_z**2 * _s(_z) * (1 - _s(_z)), {_s(_z): 1 / (1 + sp.exp(-_z))}),
}


#: The family of a form id of :data:`~symbreak.dynamics.STUDENTS` and :func:`~symbreak.dynamics.settling.make_layer`
#: as :data:`symbreak.experiments.models.FORMS` spells it (``"bilinear"``: the symmetric form, ``"kv"``: the MLP).
_FAMILIES = {"rank1": "bilinear", "symmetric": "bilinear", "gated": "gated", "kv": "kv", "key-value": "kv"}
_FAMILY_WORDS = {"bilinear": "symmetric", "gated": "gated", "kv": "MLP"}


def form_name(form: str, sigma: str, rank: int = 1) -> str:
    """A form's name as the experiments of Part V give it (Notation): the family and its σ, "MLP (ReLU)",
    "symmetric (SiLU)", "symmetric rank-2 (SiLU)"; a gated form by its own name, "SwiGLU", "bilinear (σ = id)".

    ``form`` is a form id (``"rank1"`` or ``"symmetric"``, ``"gated"``, ``"kv"`` or ``"key-value"``); the name is the
    one of :data:`symbreak.experiments.models.FORMS` where that table has the form, else built as it builds its
    names ("σ = id" for the identity).
    """
    if form not in _FAMILIES:
        raise ValueError(f"form: expected one of {list(_FAMILIES)}, got {form!r}")
    kind = _FAMILIES[form]
    for name, spec in PART_V_FORMS.items():
        if spec == (kind, sigma, rank):
            return name
    family = _FAMILY_WORDS[kind] + (f" rank-{rank}" if rank > 1 else "")
    return f"{family} ({'σ = id' if sigma == 'identity' else display_name(sigma)})"


def student_name(label: str) -> str:
    """The book's name of a layer of :data:`~symbreak.dynamics.STUDENTS`, whose keys stay the code's labels: its
    :func:`form_name`, "symmetric (SiLU)", "MLP (ReLU)", "SwiGLU"; the symmetric form with the identity, which
    computes the bilinear layer, "bilinear (σ = id)"."""
    if label not in STUDENTS:
        raise ValueError(f"label: expected one of {list(STUDENTS)}, got {label!r}")
    form, sigma = STUDENTS[label]
    return form_name("gated" if sigma == "identity" else form, sigma)


def shown(text: str) -> str:
    """``text`` with a leading student label (a key of STUDENTS, alone or before ", …") in its book name, and a pair
    after it (", qk", ", kv") as the charge it names, ``$c^{qk}_j$``."""
    for label in STUDENTS:
        if text == label or text.startswith(label + ","):
            rest = text[len(label) :].replace(", qk", ", $c^{qk}_j$").replace(", kv", ", $c^{kv}_j$")
            return student_name(label) + rest
    return text


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _law(flag: bool) -> str:
    return "law" if flag else "—"


def glue_generator_table(
    generators: Mapping[str, Mapping[str, GeneratorCheck]], laws: Mapping[str, Mapping[str, bool]]
) -> None:
    """Glue ``generator-table``: per layer and pair, generator ``≡ 0``, generator ``= δ v``, and the theorem.

    ``generators[label][pair]`` is :func:`symbreak.symbolic.conservation.generator_checks`'s result,
    ``laws[label][pair]`` the prediction :func:`symbreak.dynamics.conserved_pairs`; one row per pair
    of ``laws``, in its order, the layer by its book name (:func:`shown`).
    """
    rows = []
    for label, per_pair in laws.items():
        for pair, law in per_pair.items():
            check = generators[label][pair]
            rows.append([shown(label), PAIRS[pair], _yes(check.vanishes), _yes(check.equals_defect), _law(law)])
    header = ["layer", "charge", r"generator $\equiv 0$", r"generator $= \delta\, v$", "theorem"]
    glue_table("generator-table", header, rows)


def glue_euler_table(
    decisions: Mapping[str, Decision], names: Sequence[str] = ("identity", "relu", "gelu", "silu")
) -> None:
    """Glue ``euler-table``: for each σ of ``names``, ``E(z) = zσ'(z) − σ(z)`` in LaTeX and the decision ``E ≡ 0``.

    ``decisions[name]`` is :func:`symbreak.symbolic.conservation.euler_decision`.  ``E`` is shown in the proof's
    form where it has one (:data:`_PROOF_FORMS`, checked equal to ``E`` by sympy), else simplified on each sign
    cell of ``z`` (ReLU's ``z H(z) − max(0, z)`` is 0 on both), by :func:`~symbreak.plotting.formula_cell`.
    """
    rows = []
    t = sp.Symbol("t", positive=True)
    for name in names:
        defect, z = euler_defect(name)
        if name in _PROOF_FORMS:
            form, functions = _PROOF_FORMS[name]
            if sp.simplify((form.subs(functions) - defect.subs(z, _z)).rewrite(sp.exp)) != 0:
                raise ValueError(f"{name}: the proof's form {form} is not E(z) = {sp.simplify(defect)}")
        else:
            cells = {sp.simplify(defect.subs(z, cell)) for cell in (t, -t)}
            form = cells.pop().subs(t, z) if len(cells) == 1 and cells <= {sp.Integer(0)} else sp.simplify(defect)
        rows.append([display_name(name), formula_cell(form), decision_text(decisions[name])])
    glue_table("euler-table", [r"$\sigma$", r"$E(z) = z\sigma'(z) - \sigma(z)$", r"$E \equiv 0$"], rows)


def glue_track_setting(
    *,
    d: int,
    d_out: int,
    n: int,
    m: int,
    teacher_m: int,
    lr: float,
    weight_decay: float,
    steps: int,
    teacher_seed: int,
    student_seed: int,
) -> None:
    """Glue the sizes and the settings of the tracked runs.

    ``d``, ``d-out``, ``n``, ``m``, ``teacher-m``, ``track-lr``, ``track-wd`` (format ``g``), ``track-steps``, and
    ``teacher-seed`` (the teacher's weights and inputs) and ``student-seed`` (the students' one initialisation).
    """
    sizes = {"d": d, "d-out": d_out, "n": n, "m": m, "teacher-m": teacher_m, "track-lr": lr, "track-wd": weight_decay}
    seeds = {"teacher-seed": teacher_seed, "student-seed": student_seed}
    glue_all({name: (value, "g") for name, value in sizes.items()} | {"track-steps": steps} | seeds)


def glue_identity_table(
    worst: Mapping[str, Mapping[str, float]], laws: Mapping[str, Mapping[str, bool]], *, law_share: float
) -> None:
    """Glue ``identity-table``, ``law-share`` and ``broken-ratio`` from the one-step identity along each run.

    ``worst[label][pair]`` is the worst ratio ``|res| / bound`` over a run
    (:meth:`symbreak.dynamics.IdentityTrack.worst_ratio`).  Per layer and pair: the theorem, whether
    ``|res| ≤ bound`` at every step (the worst ratio at most 1), and the largest ``|res|`` — as the
    verdict against the stated ``law_share`` where a law holds, as a multiple of the bound where
    not.  ``broken-ratio`` is the smallest such multiple, in LaTeX.
    """
    rows = []
    for label, per_pair in worst.items():
        for pair, ratio in per_pair.items():
            law = laws[label][pair]
            largest = (
                below_share(ratio, law_share) if law else f"{scientific(ratio, digits=2, latex=True)} times the bound"
            )
            rows.append([shown(label), PAIRS[pair], _law(law), "yes" if ratio <= 1 else "no", largest])
    header = [
        "layer",
        "charge",
        "theorem",
        r"$\lvert\mathrm{res}\rvert \le$ bound at every step",
        r"largest $\lvert\mathrm{res}\rvert$",
    ]
    glue_table("identity-table", header, rows)
    broken = by_law(worst, laws)[False]
    glue_all({"law-share": percent(law_share), "broken-ratio": scientific(min(broken), digits=2, latex=True)})


def glue_train_setting(*, lr: float, steps: int) -> None:
    """Glue the training runs' settings: ``train-lr``, ``train-steps`` and the time ``train-time`` = lr · steps."""
    glue_all({"train-lr": (lr, "g"), "train-steps": steps, "train-time": (lr * steps, "g")})


def glue_drift_table(histories: Mapping[str, History], laws: Mapping[str, Mapping[str, bool]], *, lr: float) -> None:
    """Glue ``drift-table``, ``law-drift-ratio`` and ``broken-drift-ratio`` from gradient-descent runs.

    Per layer and pair: the largest drift ``max_j |c_j(t) − c_j(0)|`` and its ratio to the
    allowance ``η² Σ_t ‖∇L‖²`` (:func:`symbreak.dynamics.drift_and_allowance`), to three significant
    digits; the two glued ratios are the largest one of the conserved pairs and the smallest one of the others.
    """
    rows, ratios = [], {}
    for label, history in histories.items():
        ratios[label] = {}
        for pair, law in laws[label].items():
            drift, allowance = drift_and_allowance(history, pair, lr=lr)
            ratios[label][pair] = drift / allowance
            ratio = f"{drift / allowance:#.3g}" if drift < 100 * allowance else f"{drift / allowance:.0f}"
            rows.append([shown(label), PAIRS[pair], _law(law), scientific(drift, digits=3, latex=True), ratio])
    header = ["layer", "charge", "theorem", r"$\max_j \lvert c_j(t) - c_j(0)\rvert$", "drift / allowance"]
    glue_table("drift-table", header, rows)
    grouped = by_law(ratios, laws)
    glue_all({"law-drift-ratio": (max(grouped[True]), ".2f"), "broken-drift-ratio": (min(grouped[False]), ".2f")})


def law_cases(sweeps: Mapping[str, StepSweep]) -> tuple[list[str], list[str]]:
    """The keys of ``sweeps`` ending in ``(law)`` and those ending in ``(no law)``, in order; ``ValueError`` unless
    every key ends in one of them and at least one in ``(law)``."""
    law = [k for k in sweeps if k.endswith("(law)")]
    broken = [k for k in sweeps if k.endswith("(no law)")]
    if not law or len(law) + len(broken) != len(sweeps):
        raise ValueError(
            f"sweeps: expected keys ending in '(law)' or '(no law)', at least one '(law)', got {list(sweeps)}"
        )
    return law, broken


def glue_step_sweeps(sweeps: Mapping[str, StepSweep], *, duration: float) -> None:
    """Glue the fitted slopes of the step sweeps, the step sizes ``sweep-lrs`` and the ``duration``.

    The slopes are ``slopes-law-one``, ``slopes-law-fixed``, ``slopes-broken-one`` and
    ``slopes-broken-fixed``.  The keys of ``sweeps`` end in ``(law)`` for a conserved charge and
    ``(no law)`` for a broken one; each glued text joins the slopes of one kind with "and", in order.
    """
    law, broken = law_cases(sweeps)

    def joined(keys: list[str], attr: str, fmt: str) -> str:
        return " and ".join(format(getattr(sweeps[k], attr), fmt) for k in keys)

    first = next(iter(sweeps.values()))
    glue_all(
        {
            "slopes-law-one": joined(law, "one_step_slope", ".3f"),
            "slopes-law-fixed": joined(law, "fixed_time_slope", ".2f"),
            "slopes-broken-one": joined(broken, "one_step_slope", ".2f").replace("-", "−"),
            "slopes-broken-fixed": joined(broken, "fixed_time_slope", ".2f").replace("-", "−"),
            "sweep-lrs": ", ".join(f"{lr:g}" for lr in first.lrs),
            "duration": (duration, "g"),
        }
    )


def glue_weight_decay(
    rates: Mapping[object, Sequence[float]],
    discrete: float,
    *,
    weight_decay: float,
    lr: float,
    steps: int,
    unbalance: float,
) -> None:
    """Glue the settings and results of the weight-decay runs.

    The settings ``wd-lambda``, ``wd-lr``, ``wd-steps``, ``unbalance``; ``wd-rate-min`` and
    ``wd-rate-max``, the extremes of the fitted per-unit rates of every run over ``2λ``; and
    ``wd-rate-discrete``, the predicted :func:`symbreak.dynamics.discrete_decay_rate` over ``2λ``.
    """
    shares = [r / (2 * weight_decay) for per_unit in rates.values() for r in per_unit]
    glue_all(
        {
            "wd-lambda": (weight_decay, "g"),
            "wd-lr": (lr, "g"),
            "wd-steps": steps,
            "unbalance": (unbalance, "g"),
            "wd-rate-min": (min(shares), ".4f"),
            "wd-rate-max": (max(shares), ".4f"),
            "wd-rate-discrete": (discrete / (2 * weight_decay), ".4f"),
        }
    )


_OPTIMIZER_NAMES = ["gd", "hb1", "hb2", "mf", "adam"]
#: Adam's ``(β₁, β₂)`` as :func:`~symbreak.dynamics.train` sets them (its default, torch's) and its ``ε``, torch's
#: default, which ``train`` leaves alone.
ADAM_BETAS: tuple[float, float] = inspect.signature(train).parameters["betas"].default
ADAM_EPS: float = inspect.signature(torch.optim.Adam).parameters["eps"].default


def _power_of_ten(value: float) -> str:
    """``"$10^{-8}$"`` for ``1e-8``; refuses a value that is not a power of ten."""
    exponent = round(math.log10(value))
    if not math.isclose(value, 10.0**exponent, rel_tol=1e-12):
        raise ValueError(f"value: expected a power of ten, got {value!r}")
    return f"$10^{{{exponent}}}$"


def glue_optimizers(
    drifts: Mapping[str, Sequence[float]],
    slopes: Mapping[str, float],
    *,
    momenta: Sequence[float],
    damping: float,
    adam_duration: float,
    steps: Sequence[int],
) -> None:
    """Glue the settings and results of the optimiser comparison.

    The settings ``hb-mus``, ``mf-kappa``, ``adam-duration``, ``adam-betas`` and ``adam-eps`` (``ADAM_BETAS``,
    ``ADAM_EPS``), ``sweep-steps``; and per optimiser
    (gradient descent, two heavy balls, the momentum flow and Adam, in the order of ``drifts``)
    the fitted slope ``slope-*`` and the drift at the finest cut ``drift-*``.
    """
    if len(drifts) != len(_OPTIMIZER_NAMES):
        raise ValueError(f"drifts: expected {len(_OPTIMIZER_NAMES)} optimisers, got {list(drifts)}")
    values: dict[str, object] = {
        "hb-mus": " and ".join(f"{mu:g}" for mu in momenta),
        "mf-kappa": (damping, "g"),
        "adam-duration": (adam_duration, "g"),
        "adam-betas": "({:g}, {:g})".format(*ADAM_BETAS),
        "adam-eps": _power_of_ten(ADAM_EPS),
    }
    for key, name in zip(drifts, _OPTIMIZER_NAMES, strict=True):
        values[f"slope-{name}"] = format(slopes[key], ".2f").replace("-", "−")  # the minus sign U+2212
        values[f"drift-{name}"] = scientific(drifts[key][-1], digits=2, latex=True)
    values["sweep-steps"] = ", ".join(str(s) for s in steps)
    glue_all(values)
