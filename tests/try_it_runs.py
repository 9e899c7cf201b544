"""The runs behind the Try-it answers: each function makes the edit a Try-it asks for, with
the course's own code, and returns what the answer quotes (prose_numbers.toml names them)."""

from __future__ import annotations

import itertools
import math
from functools import cache

import torch

from nbhelpers.corpus.bpe import learn_bpe, merges_until_single
from nbhelpers.corpus.grammar import JapaneseGrammar
from nbhelpers.example import running_example
from nbhelpers.memory import attention_memory
from nbhelpers.statistics import dot_product_variance

__all__ = [
    "walk_weights",
    "walk_scores",
    "same_vector_score",
    "merge_number",
    "merge_count",
    "sentence_single_token",
    "largest_fitting_n",
    "scratch_gib",
    "flash_mib",
    "stored_accuracies",
    "curve_seed",
    "variance_at",
    "failing_seeds",
    "cross_entropy_gradients",
    "variance_four_ratios",
    "old_check_error",
    "key_zero_gradient",
    "stack",
    "spread",
    "demo_parameters_with",
    "explorer_step",
    "output_from_mean",
    "scaling_readout",
    "notebook_run",
    "padding_rows_moved",
    "clamped_mask_leak",
    "unmasked_reference_errors",
    "explorer_movement",
    "blockwise_errors",
    "hand_losses",
    "copying_model",
    "largest_early_rise",
    "four_heads_gap",
    "flattened_head",
    "explorer_heads",
    "random_layers_largest",
    "rows_ranking_keys_by_k",
    "heads_run",
    "two_head_seeds",
    "unwarmed_run",
    "unwarmed_kl",
]


def walk_scores(walk_query=None) -> torch.Tensor:
    """00 and 01: 歩く's raw scores q·k (not divided by √2), optionally with the verb's row of
    W_Q (row 3, the action feature) set to `walk_query`."""
    ex = running_example()
    W_Q = ex.W_Q.clone()
    if walk_query is not None:
        W_Q[3] = torch.tensor(walk_query)
    return (ex.X @ W_Q)[-1] @ (ex.X @ ex.W_K).T


def walk_weights(T: float = 1.0, walk_query=None) -> torch.Tensor:
    """歩く's attention weights softmax(q·k / √2 / T)."""
    return torch.softmax(walk_scores(walk_query) / math.sqrt(2) / T, dim=-1)


def same_vector_score() -> float:
    """00: every token the same vector x = (1, 1, 1, 1): the query/key score q·k / √2."""
    ex = running_example()
    x = torch.ones(4)
    return float((x @ ex.W_Q) @ (x @ ex.W_K) / math.sqrt(2))


@cache
def grammar_bpe():
    """06: the BPE learned on the grammar's 2,000 sentences, as the notebook learns it."""
    corpus = ["".join(words) for words in JapaneseGrammar().sample(2000, seed=0)]
    return learn_bpe(corpus, 120)


def merge_number(token: str) -> int:
    """The 1-based number of the merge that makes `token`."""
    return next(k for k, m in enumerate(grammar_bpe().merges, start=1) if m.token == token)


def merge_count(token: str) -> int:
    return next(m.count for m in grammar_bpe().merges if m.token == token)


def sentence_single_token() -> int:
    return merges_until_single(grammar_bpe(), "犬が河岸を歩く")


def largest_fitting_n(budget: int, dtype: torch.dtype, heads: int = 12) -> int:
    """10: the largest n whose from-scratch bytes (attention_memory) stay within `budget`."""
    low, high = 1, 10**7  # fits, does not fit

    def fits(n: int) -> bool:
        return attention_memory(n, heads=heads, dtype=dtype)["(a) from scratch"] <= budget

    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle) else (low, middle)
    return low


def scratch_gib(n: int, dtype: torch.dtype, heads: int = 12) -> float:
    return attention_memory(n, heads=heads, dtype=dtype)["(a) from scratch"] / 2**30


def flash_mib(n: int, dtype: torch.dtype, heads: int = 12) -> float:
    return attention_memory(n, heads=heads, dtype=dtype)["(b)/(c) flash"] / 2**20


def stored_accuracies(task: str, n: int, start: str = "pre-trained", lam: float = 0.5):
    """11: the stored accuracies of one point of the curves, {seed: accuracy}."""
    from nbhelpers.experiments.fine_tuning import load_curves

    return {
        r["seed"]: r["accuracy"]
        for r in load_curves()["runs"]
        if (r["task"], r["start"], r["lam"], r["n_labelled"]) == (task, start, lam, n)
    }


def curve_seed(task: str, n: int, seed: int = 0, start: str = "pre-trained", lam: float = 0.5):
    """11: one seed's stored accuracy."""
    return stored_accuracies(task, n, start, lam)[seed]


def variance_at(d: int, samples: int, seed: int | None = None) -> float:
    """01: Var(q·k / √d_k) as notebook 01 draws it, from a generator seeded with d_k (or with
    another `seed`)."""
    generator = torch.Generator().manual_seed(d if seed is None else seed)
    return dot_product_variance(d, samples, scale=True, generator=generator)


def failing_seeds(count: int, samples: int = 400, tolerance: float = 0.2) -> float:
    """01: the share of `count` other seedings whose check at `samples` draws fails."""
    d_ks = [2**p for p in range(10)]
    failed = sum(
        any(abs(variance_at(d, samples, seed=1000 * s + d) - 1) > tolerance for d in d_ks)
        for s in range(1, count + 1)
    )
    return failed / count


def cross_entropy_gradients(d: int, scale: bool, problems: int = 1000) -> tuple[float, float]:
    """02: notebook 02's `gradients` with the Try-it's loss, the cross-entropy -log a_0:
    (median |dℓ/ds|, median |x| |dℓ/dq|), the problems drawn as the notebook draws them."""
    from nbhelpers import similarity_scores, softmax

    draws = torch.Generator().manual_seed(d)
    x, keys, _ = (
        torch.randn(shape, generator=draws).double()
        for shape in ((problems, 1, d), (problems, 5, d), (problems, 1, 5))
    )
    W_Q = torch.eye(d, dtype=torch.float64).requires_grad_()
    q = x @ W_Q
    s = similarity_scores(q, keys, scale=scale)
    q.retain_grad(), s.retain_grad()
    (-torch.log(softmax(s)[..., 0])).sum().backward()
    share = x.norm(dim=-1) * q.grad.norm(dim=-1)
    return float(s.grad.norm(dim=-1).median()), float(share.median())


def variance_four_ratios(divisor) -> list[float]:
    """01: Var(q·k / divisor(d)) at each d_k for queries of variance 4, drawn as the Try-it's code
    draws them: one generator seeded with d_k, the queries first."""
    ratios = []
    for d in [2**p for p in range(10)]:
        generator = torch.Generator().manual_seed(d)
        q = 2 * torch.randn(4000, d, generator=generator)
        k = torch.randn(4000, d, generator=generator)
        ratios.append(float(((q * k).sum(-1) / divisor(d)).var()))
    return ratios


def old_check_error() -> float:
    """02: with the cross-entropy loss, how far the old check's J g is from dℓ/ds at d_k = 1."""
    from nbhelpers import similarity_scores, softmax

    draws = torch.Generator().manual_seed(1)
    x, keys, g = (
        torch.randn(shape, generator=draws).double()
        for shape in ((1000, 1, 1), (1000, 5, 1), (1000, 1, 5))
    )
    s = similarity_scores(x, keys, scale=False).requires_grad_()
    a = softmax(s)
    (-torch.log(a[..., 0])).sum().backward()
    a = a.detach()
    J = torch.diag_embed(a.squeeze(-2)) - a.transpose(-2, -1) @ a
    return float((s.grad - g @ J).abs().max())


def key_zero_gradient() -> float:
    """02: the median |a - e_0| of the raw rows at d_k = 512 that are one-hot on key 0."""
    from nbhelpers import similarity_scores, softmax

    draws = torch.Generator().manual_seed(512)
    x, keys, _ = (
        torch.randn(shape, generator=draws).double()
        for shape in ((1000, 1, 512), (1000, 5, 512), (1000, 1, 5))
    )
    a = softmax(similarity_scores(x, keys, scale=False))[:, 0]
    onehot = a[:, 0] > 0.99
    e_0 = torch.zeros(5, dtype=a.dtype)
    e_0[0] = 1
    return float((a[onehot] - e_0).norm(dim=-1).median())


@cache
def _stacks(depth: int, init_std: float) -> dict:
    from nbhelpers.experiments.deep_stack import compare_stacks

    profiles = compare_stacks(depth=depth, d_model=32, n_heads=4, seed=0, init_std=init_std)
    return {profile.name: profile for profile in profiles}


def stack(name: str, *, depth: int = 24, init_std: float = 0.02):
    """07: one variant's profile from compare_stacks, as the Try-it's edit runs it."""
    return _stacks(depth, init_std)[name]


def spread(name: str, **kwargs) -> float:
    """07: max/min of a variant's weight gradients over its blocks."""
    gradients = stack(name, **kwargs).weight_gradient
    return float(gradients.max() / gradients.min())


def demo_parameters_with(n_layers: int) -> int:
    """07: notebook 07's demo model (9 tokens, n_ctx = 16, d = 32, 4 heads) with n_layers."""
    from nbhelpers.gpt1 import GPT1Config

    config = GPT1Config(vocab_size=9, n_ctx=16, d_model=32, n_layers=n_layers, n_heads=4)
    return config.parameter_count()


def explorer_step(temperature: float, d_k: int = 4, seed: int = 0):
    """03: the AttentionExplorer's step at its defaults (5 tokens, d_model = 8, d_v = 4)."""
    from nbhelpers.widgets.attention_explorer import attention_step

    return attention_step(5, 8, d_k, 4, temperature, seed)


def output_from_mean(temperature: float) -> float:
    """03: the largest gap between a grey bar o_i and the plain mean of the dots v_j."""
    step = explorer_step(temperature)
    return float((step.output - step.V.mean(dim=0)).abs().max())


def scaling_readout(d_k: int, scale: bool = False) -> tuple[float, str]:
    """02: the ScoreScalingExplorer's readout at one setting, built as notebook 02 builds it:
    the smallest of the rows' largest weights, and the token of that row."""
    from nbhelpers.widgets.score_scaling import ScoreScalingExplorer

    explorer = ScoreScalingExplorer(running_example().tokens, d_k=d_k, scale=scale)
    row_max = explorer.weights().amax(dim=-1)
    return float(row_max.min()), explorer.tokens[int(row_max.argmin())]


@cache
def notebook_run(stem: str, edits: tuple[tuple[str, str], ...], until: str) -> dict:
    """What a learner's edited notebook computes: the English notebook's code cells up to
    the cell whose id is `until` (an id: a cell added above does not move it), run in order
    in one namespace, with each (old, new) of `edits` replaced in the cells that hold it (the
    Try-it's edit; each must occur somewhere). Printing and display are silenced; the
    namespace is returned."""
    import contextlib
    import io
    from pathlib import Path

    import nbformat

    path = Path(__file__).resolve().parent.parent / "notebooks" / f"{stem}.ipynb"
    cells = nbformat.read(path, as_version=4).cells
    cells = cells[: [cell.id for cell in cells].index(until) + 1]
    namespace = {"__name__": "__main__", "display": lambda *args, **kwargs: None}
    applied = set()
    for index, cell in enumerate(cells):
        if cell.cell_type != "code":
            continue
        source = cell.source
        for old, new in edits:
            if old in source:
                source = source.replace(old, new)
                applied.add(old)
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(source, f"{stem} cell {index}", "exec"), namespace)
    missing = [old for old, _ in edits if old not in applied]
    assert not missing, f"{stem}: the Try-it's edit no longer applies: {missing}"
    return namespace


def padding_rows_moved(lengths: str = "[5, 1]") -> float:
    """04: with `lengths = [5, 1]`, how far the [PAD] rows move between the causal-only and
    the causal + padding outputs (the cell after the padding check prints it)."""
    run = notebook_run(
        "04_masked_self_attention",
        (("lengths = [5, 3]", f"lengths = {lengths}"),),
        until="c4a0e003",
    )
    return float(run["moved"])


def clamped_mask_leak() -> tuple[int, float]:
    """04: the perturbation test with M.clamp(min=-10): the first position whose change moves
    an earlier output (where the assertion fails), and by how much."""
    clamped = "outputs(X, M.clamp(min=-10)), outputs(changed, M.clamp(min=-10))"
    stop = "if earlier:\n        break"  # where the assertion would fail
    run = notebook_run(
        "04_masked_self_attention",
        (
            ("outputs(X, M), outputs(changed, M)", clamped),
            ('assert earlier == 0.0, "an earlier output saw the future"', stop),
        ),
        until="f82ed53e",
    )
    return run["c"], float(run["earlier"])


def unmasked_reference_errors() -> list[float]:
    """07: the block check with src_mask=M removed from the reference: the largest error at
    each position, block(h) against the reference layer without the causal mask."""
    run = notebook_run("07_gpt1_transformer_block", (), until="7cf4cae0")
    h, block, reference = run["h"], run["block"], run["reference"]
    with torch.no_grad():
        error = (block(h[None]) - reference(h[None])).abs().amax(dim=-1)[0]
    return [float(e) for e in error]


def explorer_movement(position: int, replacement: str) -> torch.Tensor:
    """07: the CausalityExplorer's movement() after changing `position` to `replacement`,
    on notebook 07's demo model and first sentence, (layers, positions)."""
    run = notebook_run("07_gpt1_transformer_block", (), until="f909249f")
    explorer = run["explorer"]
    explorer.causal.value = True  # the Try-it ticks the mask first
    explorer.position.value = position
    explorer.replacement.value = run["vocab"].index(replacement)
    return explorer.movement()


def blockwise_errors(block: int) -> dict:
    """10: blockwise_attention with `block` keys at a time on the notebook's Q, K, V: its largest
    difference from F.sdpa, and at that output each one's distance from a float64 computation,
    and how many outputs differ from F.sdpa by more than 1e-6."""
    import torch.nn.functional as F

    run = notebook_run("10_attention_at_scale", (), until="e4ab4eab")
    Q, K, V = (run[name].cpu() for name in "QKV")
    ours, theirs = (
        run["blockwise_attention"](Q, K, V, block),
        F.scaled_dot_product_attention(Q, K, V),
    )
    exact = F.scaled_dot_product_attention(Q.double(), K.double(), V.double())
    gap = (ours - theirs).abs()
    worst = gap.argmax()
    return {
        "gap": float(gap.max()),
        "sdpa_from_float64": float((theirs.double() - exact).flatten()[worst].abs()),
        "ours_from_float64": float((ours.double() - exact).flatten()[worst].abs()),
        "above_1e-6": int((gap > 1e-6).sum()),
    }


@cache
def _notebook_08(shift: bool = True) -> dict:
    """08's definitions (cells up to train_by_hand), with train_step's targets unshifted
    (`ids[:, :-1]`, the third Try-it) when shift is False."""
    edits = () if shift else (("ids[:, 1:].flatten()", "ids[:, :-1].flatten()"),)
    return notebook_run("08_training_gpt1", edits, until="c8a1e007")


def hand_losses(steps: int, *, shift: bool = True, **kwargs):
    """08: train_by_hand on a fresh model seeded as the notebook's cells seed it, on one
    thread as they run it: (the losses, the model)."""
    from nbhelpers import GPT1, seed_everything
    from nbhelpers.support.threads import cpu_threads

    run = _notebook_08(shift)
    seed_everything(0)
    model = GPT1(run["config"]).to(run["device"])
    with cpu_threads(1):
        losses = run["train_by_hand"](model, steps=steps, **kwargs)
    return losses, model


@cache
def copying_model() -> dict:
    """08: the third Try-it, 100 steps with the targets unshifted: how often the argmax on the
    2,000 held-out sentences is the input token itself, its mean probability, the mean KL
    from the truth, the last loss, and P(を | 犬 が 河岸 を)."""
    from nbhelpers.experiments.heldout import evaluate, make_heldout

    losses, model = hand_losses(100, shift=False)
    run = _notebook_08(False)
    grammar, tokenizer = run["grammar"], run["tokenizer"]
    heldout = make_heldout(grammar, n=2000, seed=1)
    model.eval()
    with torch.no_grad():
        inputs = heldout.ids[:, :-1].to(model.device)
        probs = torch.cat([torch.softmax(model(c), -1) for c in inputs.split(250)])
        real = inputs != tokenizer.pad_id
        top = probs.argmax(-1)
        itself = probs.gather(-1, inputs.unsqueeze(-1)).squeeze(-1)
        prefix = tokenizer.encode("犬 が 河岸 を").to(model.device)
        after = torch.softmax(model(prefix)[-1], -1)
    return {
        "first_loss": losses[0],
        "last_loss": losses[-1],
        "copies": float((top == inputs)[real].float().mean()),
        "copy_probability": float(itself[real].mean()),
        "mean_kl": evaluate(model, heldout)[0],
        "after_wo": (tokenizer.tokens[int(after.argmax())], float(after.max())),
    }


def largest_early_rise(seeds: int = 4, steps: int = 20) -> float:
    """08: with warmup=0, the largest step-to-step rise of the loss in the first `steps` steps
    of cell 21's 30-step run, over the sentence seeds 0 .. seeds - 1."""
    rises = []
    for seed in range(seeds):
        losses = hand_losses(30, warmup=0, seed=seed)[0][:steps]
        rises += [later - earlier for earlier, later in itertools.pairwise(losses)]
    return max(rises)


@cache
def _notebook_05() -> dict:
    """05 up to its explorer (cell 38): X, mha, the explorer and the rest."""
    return notebook_run("05_multi_head_attention", (), until="0b71e00f")


def four_heads_gap() -> float:
    """05: the same weights grouped into 4 heads instead of 2: the largest output change."""
    from nbhelpers import MultiHeadAttention

    run = _notebook_05()
    four = MultiHeadAttention(run["d_model"], 4).to(run["device"])
    four.load_state_dict(run["mha"].state_dict())
    with torch.no_grad():
        return float((four(run["X"]) - run["mha"](run["X"])).abs().max())


def flattened_head() -> dict:
    """05: one_head with the scores divided by √d_model (q / √2 passed to attention): the
    largest output of mha(X), and head 0's largest weight for 歩く, right and flattened."""
    from nbhelpers import attention

    run = _notebook_05()
    mha, X, d_head = run["mha"], run["X"], run["d_head"]
    rows = slice(0, d_head)
    with torch.no_grad():
        q, k, v = (X @ W.weight[rows].T + W.bias[rows] for W in (mha.W_Q, mha.W_K, mha.W_V))
        right, flat = attention(q, k, v)[1], attention(q / 2**0.5, k, v)[1]
        return {
            "largest_output": float(mha(X).abs().max()),
            "right": float(right[0, -1].max()),
            "flattened": float(flat[0, -1].max()),
        }


def explorer_heads(n_heads: int, module=None) -> dict:
    """05: the MultiHeadExplorer's weights at n_heads (causal mask off, its default) on the
    notebook's X and weights, or another module's: the mean of each row's largest weight,
    the mean row entropy, and per head the mean largest weight."""
    from nbhelpers import MultiHeadExplorer
    from nbhelpers.statistics import row_entropy

    run = _notebook_05()
    explorer = MultiHeadExplorer(
        run["tokens"], run["X"][0].cpu(), module=module or run["mha"].cpu(), n_heads=n_heads
    )
    weights = explorer.compute(n_heads)[0]  # (h, n, n)
    largest = weights.amax(dim=-1)
    return {
        "weights": weights,
        "mean_largest": float(largest.mean()),
        "entropy": float(row_entropy(weights).mean()),
        "per_head": [float(m) for m in largest.mean(dim=-1)],
    }


def random_layers_largest(layers: int = 300) -> tuple[float, float]:
    """05: over `layers` randomly initialised layers (torch seeds 0 .. layers - 1) on the
    notebook's X, as the explorer computes them (its weights regrouped into 1 or 8 heads, no
    mask): the mean largest weight of a row with 1 head and with 8 heads."""
    from nbhelpers import MultiHeadAttention

    run = _notebook_05()
    X, d_model = run["X"][0].cpu(), run["d_model"]
    means = {1: [], 8: []}
    for seed in range(layers):
        torch.manual_seed(seed)
        state = MultiHeadAttention(d_model, 1).state_dict()
        for h in means:
            module = MultiHeadAttention(d_model, h)
            module.load_state_dict(state)
            with torch.no_grad():
                weights = module(X, return_weights=True)[1]  # (h, n, n)
            means[h].append(float(weights.amax(dim=-1).mean()))
    return sum(means[1]) / layers, sum(means[8]) / layers


def rows_ranking_keys_by_k(n_heads: int = 8) -> int:
    """05: with d_head = 1, how many rows of the explorer's weights order the keys exactly as
    k_j does, forwards or backwards (the sign of q_i decides which)."""
    from nbhelpers import MultiHeadAttention, split_heads

    run = _notebook_05()
    module = MultiHeadAttention(run["d_model"], n_heads)
    module.load_state_dict(run["mha"].cpu().state_dict())
    X = run["X"][0].cpu()
    with torch.no_grad():
        keys = split_heads(module.W_K(X), n_heads)[..., 0]  # (h, n): one feature per head
    weights = explorer_heads(n_heads)["weights"]
    count = 0
    for head in range(n_heads):
        by_key = keys[head].argsort()
        for row in weights[head]:
            order = row.argsort()
            count += bool(torch.equal(order, by_key) or torch.equal(order, by_key.flip(0)))
    return count


@cache
def heads_run(n_heads: int, seed: int = 0, steps: int = 300, hidden: int = 64):
    """05: train_heads as the notebook and its Try-its call it."""
    from nbhelpers.experiments.head_specialisation import train_heads

    return train_heads(n_heads, seed=seed, steps=steps, hidden=hidden)


def two_head_seeds(seeds: int = 10) -> dict:
    """05: two heads over seeds 0 .. seeds - 1: which seeds give head 1 the previous token,
    the least weight a head puts on its own key, the most on the other, and the least
    'both right'."""
    runs = [heads_run(2, seed) for seed in range(seeds)]
    head_1_previous = [s for s, r in enumerate(runs) if r.shares[1].previous > r.shares[0].previous]
    own, other = [], []
    for r in runs:
        for share in r.shares:
            own.append(max(share.previous, share.first))
            other.append(min(share.previous, share.first))
    return {
        "head_1_previous": head_1_previous,
        "own": min(own),
        "other": max(other),
        "both": min(r.accuracy.both for r in runs),
    }


@cache
def unwarmed_run():
    """08: the full run of the training cell with warmup=0 (800 steps, as nbhelpers.train
    runs it, on one thread): its history."""
    from nbhelpers import GPT1, seed_everything, train
    from nbhelpers.experiments.heldout import make_heldout

    run = _notebook_08()
    seed_everything(0)
    model = GPT1(run["config"])
    heldout = make_heldout(run["grammar"], n=2000, seed=1)
    return train(model, run["grammar"], heldout=heldout, steps=800, batch_size=256, lr=1e-2,
                 seed=0, warmup=0, progress=False)  # fmt: skip


def unwarmed_kl(step: int) -> float:
    history = unwarmed_run()
    return history.kl[history.steps.index(step)]
