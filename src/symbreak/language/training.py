"""Training and evaluating one language model: batches, the learning-rate schedule, AdamW and fixed-window losses.

One run is a function of its :class:`~symbreak.language.protocol.RunSpec` and
the protocol only: the seed draws the initialisation from torch's global
generator and the training batches from a separate generator seeded with
``1_000_003 · (seed + 1)``; the evaluation windows are fixed positions, evenly
spaced over a split, the same for every run.
"""

from __future__ import annotations

import math
import time

import torch

from symbreak.language.corpus import Corpus, load_corpus
from symbreak.language.model import GPT, ffn_parameters, ffn_width, make_model
from symbreak.language.protocol import Protocol, RunSpec

__all__ = ["learning_rate_at", "batch_generator", "random_batch", "fixed_windows", "evaluate", "train_run"]


def learning_rate_at(iteration: int, peak: float, protocol: Protocol, iterations: int) -> float:
    """nanoGPT's schedule: linear warm-up to ``peak``, then cosine decay to ``min_lr_ratio · peak`` at the end."""
    t = protocol.training
    low = t.min_lr_ratio * peak
    if iteration < t.warmup_iters:
        return peak * (iteration + 1) / (t.warmup_iters + 1)
    if iteration >= iterations:
        return low
    progress = (iteration - t.warmup_iters) / max(1, iterations - t.warmup_iters)
    return low + 0.5 * (1.0 + math.cos(math.pi * progress)) * (peak - low)


def batch_generator(seed: int) -> torch.Generator:
    """The generator of a run's training batches (independent of the initialisation's generator)."""
    return torch.Generator().manual_seed(1_000_003 * (seed + 1))


def _windows(data: torch.Tensor, starts: torch.Tensor, block: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs ``data[s : s + block]`` and targets ``data[s + 1 : s + 1 + block]`` for every start ``s``."""
    offsets = torch.arange(block)
    idx = starts.reshape(-1, 1) + offsets
    return data[idx].long(), data[idx + 1].long()


def random_batch(data: torch.Tensor, batch_size: int, block: int, generator: torch.Generator):
    """A batch of ``batch_size`` windows at uniformly drawn positions (nanoGPT's ``get_batch``)."""
    starts = torch.randint(len(data) - block, (batch_size,), generator=generator)
    return _windows(data, starts, block)


def fixed_windows(data: torch.Tensor, batches: int, batch_size: int, block: int) -> torch.Tensor:
    """The ``(batches, batch_size)`` start positions, evenly spaced over ``data``: the same for every run."""
    n = batches * batch_size
    return torch.linspace(0, len(data) - block - 1, n, dtype=torch.float64).round().long().reshape(batches, batch_size)


@torch.no_grad()
def evaluate(model: GPT, data: torch.Tensor, batches: int, batch_size: int) -> float:
    """The mean cross-entropy (nats per character) over the fixed windows of ``data``."""
    block = model.shape.block_size
    was_training = model.training
    model.eval()
    losses = [float(model(*_windows(data, s, block))[1]) for s in fixed_windows(data, batches, batch_size, block)]
    model.train(was_training)
    return sum(losses) / len(losses)


def _optimizer(model: GPT, protocol: Protocol, lr: float) -> torch.optim.AdamW:
    """AdamW with weight decay on the matrices and embeddings (dim ≥ 2), none on the LayerNorm gains."""
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.dim() >= 2]
    rest = [p for p in params if p.dim() < 2]
    t = protocol.training
    groups = [{"params": decay, "weight_decay": t.weight_decay}, {"params": rest, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=tuple(t.betas))


def train_run(protocol: Protocol, run: RunSpec, corpus: Corpus | None = None) -> dict:
    """Train ``run`` under ``protocol``; the measurements of a stored result (without its provenance)."""
    if not isinstance(protocol, Protocol):
        raise TypeError(f"protocol: expected a Protocol, got {type(protocol).__name__}")
    if not isinstance(run, RunSpec):
        raise TypeError(f"run: expected a RunSpec, got {type(run).__name__}")
    c = protocol.corpus
    corpus = corpus or load_corpus(c.n_validation, c.n_test, c.split_seed)
    shape, t, ev = protocol.shape, protocol.training, protocol.evaluation
    iterations = protocol.stage(run.stage).iterations
    threads = torch.get_num_threads()
    torch.set_num_threads(t.threads)
    try:
        start = time.perf_counter()
        model = make_model(shape, run.form, len(corpus.vocabulary), run.seed)
        opt = _optimizer(model, protocol, run.learning_rate)
        gen = batch_generator(run.seed)
        curve: dict[str, list] = {"iteration": [], "train": [], "validation": []}
        train_seconds = 0.0

        def record(it: int) -> None:
            curve["iteration"].append(it)
            curve["train"].append(evaluate(model, corpus.train, ev.curve_batches, t.batch_size))
            curve["validation"].append(evaluate(model, corpus.validation, ev.curve_batches, t.batch_size))

        for it in range(iterations):
            if it % ev.interval == 0:
                record(it)
            tick = time.perf_counter()
            for group in opt.param_groups:
                group["lr"] = learning_rate_at(it, run.learning_rate, protocol, iterations)
            x, y = random_batch(corpus.train, t.batch_size, shape.block_size, gen)
            _, loss = model(x, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), t.grad_clip)
            opt.step()
            train_seconds += time.perf_counter() - tick
        record(iterations)
        final = {
            "validation": evaluate(model, corpus.validation, ev.final_batches, t.batch_size),
            "test": evaluate(model, corpus.test, ev.final_batches, t.batch_size),
        }
        wall = time.perf_counter() - start
    finally:
        torch.set_num_threads(threads)
    tokens = iterations * t.batch_size * shape.block_size
    return {
        "iterations": iterations,
        "ffn_width": ffn_width(run.form, shape),
        "ffn_parameters": ffn_parameters(run.form, shape),
        "parameters": model.parameter_count(),
        "vocabulary": len(corpus.vocabulary),
        "threads": t.threads,
        "wall_time_s": wall,
        "train_time_s": train_seconds,
        "tokens": tokens,
        "tokens_per_s": tokens / train_seconds if train_seconds > 0 else float("nan"),
        "curve": curve,
        "final": final,
        "finite": all(math.isfinite(v) for v in final.values()),
    }
