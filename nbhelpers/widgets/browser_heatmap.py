"""BrowserHeatmap: attention weights drawn in the browser (anywidget), with the value and the
formula of a cell under the pointer and a pinned row followed step by step.

The kernel sends the raw scores q_i·k_j once (one matrix per head); the browser recomputes
s = q·k / √d_k, / T, + M and the softmax (static/attention_heatmap.js) whenever a control
moves, so a redraw never waits for the kernel. Beside the live view, the notebook keeps a
PNG of the same weights (for GitHub and nbviewer), and `to_html` writes the widget, its data
and its script into one file that works offline.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import anywidget
import torch
import traitlets

from ..attention import softmax
from ..figures.canvas import figure_to_png
from ..figures.heatmap import attention_heatmap
from ..masks import causal_mask
from ..support.language import tr
from ..support.validation import check_float_tensor, check_positive_int

SCRIPT = Path(__file__).with_name("static") / "attention_heatmap.js"
MAX_TOKENS = 32  # the browser recomputes a softmax of at most 32 x 32 per redraw
# The temperature slider's ends, as on the kernel-drawn explorers (widgets/base.py).
TEMPERATURE_RANGE = (0.1, 5.0)
# The synced traits the browser draws from (to_html writes them into the page).
STATE = (
    "tokens",
    "raw",
    "values",
    "d_k",
    "temperature",
    "temperature_range",
    "scaled",
    "causal",
    "head",
    "pinned",
    "texts",
)


def texts() -> dict[str, str]:
    """The widget's words in the learner's language; {placeholders} are filled in the browser."""
    return {
        "temperature": tr("temperature"),
        "scale": tr("divide by √d_k"),
        "causal": tr("causal mask"),
        "head": tr("head"),
        "keys": tr("keys j →"),
        "queries": tr("queries i"),
        "hint": tr("Point at a cell for its formula; click a row to follow it step by step."),
        "cell": tr("query {i} = {q}, key {j} = {k}"),
        "score_scaled": tr("s{i}{j} = q{i}·k{j} / √d_k / T = {raw} / {root} / {T} = {s}"),
        "score_raw": tr("s{i}{j} = q{i}·k{j} / T = {raw} / {T} = {s}"),
        "weight": tr("a{i}{j} = exp(s{i}{j}) / Σⱼ exp(s{i}ⱼ) = {a}"),
        "blocked": tr("M{i}{j} = −∞ (key {k} comes after query {q}), so a{i}{j} = 0"),
        "pinned": tr("query {q}"),
        "step_raw": tr("q·k"),
        "step_scaled": tr("÷ √d_k"),
        "step_unscaled": tr("(not scaled)"),
        "step_tempered": tr("÷ T"),
        "step_masked": tr("+ M"),
        "step_softmax": tr("softmax → a"),
        "step_output": tr("o = Σⱼ a v"),
    }


class BrowserHeatmap(anywidget.AnyWidget):
    """Attention weights softmax(Q Kᵀ / √d_k / T + M) of one sentence, drawn in the browser.

        BrowserHeatmap(Q, K, tokens, V=None, causal=False, temperature=1.0)

    Q, K (n, d_k) or (h, n, d_k) per head; V (n, d_v) for o_i = Σ_j a_ij v_j (one head).
    Notebooks 00, 04 and 05.
    """

    _esm = SCRIPT.read_text(encoding="utf-8")
    tokens = traitlets.List(traitlets.Unicode()).tag(sync=True)
    raw = traitlets.List().tag(sync=True)  # q_i·k_j, (h, n, n) as nested lists
    values = traitlets.List().tag(sync=True)  # V (n, d_v), or [] for none
    d_k = traitlets.Int(1).tag(sync=True)
    temperature = traitlets.Float(1.0).tag(sync=True)
    temperature_range = traitlets.List(list(TEMPERATURE_RANGE)).tag(sync=True)
    scaled = traitlets.Bool(True).tag(sync=True)
    causal = traitlets.Bool(False).tag(sync=True)
    head = traitlets.Int(0).tag(sync=True)
    pinned = traitlets.Int(-1).tag(sync=True)  # the query row followed step by step
    texts = traitlets.Dict().tag(sync=True)

    def __init__(self, Q, K, tokens, V=None, *, causal=False, temperature=1.0, scaled=True):
        check_float_tensor("Q", Q)
        check_float_tensor("K", K)
        if Q.shape != K.shape or Q.dim() not in (2, 3):
            raise ValueError(
                tr(
                    "Q and K must have the same shape, (n, d_k) or (h, n, d_k), got {q} and {k}",
                    q=tuple(Q.shape),
                    k=tuple(K.shape),
                )
            )
        Q, K = (Q, K) if Q.dim() == 3 else (Q.unsqueeze(0), K.unsqueeze(0))
        n = Q.shape[-2]
        tokens = [str(token) for token in tokens]
        if len(tokens) != n or not 1 <= n <= MAX_TOKENS:
            raise ValueError(
                tr(
                    "tokens must name the {n} rows of Q (at most {most}), got {count}",
                    n=n,
                    most=MAX_TOKENS,
                    count=len(tokens),
                )
            )
        if V is not None:
            check_float_tensor("V", V)
            if V.dim() != 2 or V.shape[0] != n or Q.shape[0] != 1:
                raise ValueError(
                    tr(
                        "V must be (n, d_v) = ({n}, ...) for one head, got {shape}",
                        n=n,
                        shape=tuple(V.shape),
                    )
                )
        check_positive_int("d_k", Q.shape[-1])
        low, high = TEMPERATURE_RANGE
        if not (isinstance(temperature, (int, float)) and low <= temperature <= high):
            raise ValueError(
                tr(
                    "temperature must be a number in [{low:g}, {high:g}], got {value!r}",
                    low=low,
                    high=high,
                    value=temperature,
                )
            )
        raw = (Q @ K.transpose(-2, -1)).double()  # (h, n, n): q_i·k_j, before any scaling
        super().__init__(
            tokens=tokens,
            raw=raw.tolist(),
            values=[] if V is None else V.double().tolist(),
            d_k=int(Q.shape[-1]),
            temperature=float(temperature),
            scaled=bool(scaled),
            causal=bool(causal),
            texts=texts(),
        )

    def weights(self) -> torch.Tensor:
        """The weights the browser shows now, computed by nbhelpers: (n, n)."""
        raw = torch.tensor(self.raw[self.head], dtype=torch.float64)
        s = raw / (self.d_k**0.5 if self.scaled else 1.0) / self.temperature
        if self.causal:
            s = s + causal_mask(len(self.tokens), dtype=torch.float64)
        return softmax(s)

    def png(self) -> bytes:
        blocked = None
        if self.causal:
            blocked = torch.ones(len(self.tokens), len(self.tokens)).triu(1).bool().numpy()
        figure = attention_heatmap(
            self.weights().numpy(), self.tokens, self.tokens, masked=blocked, title=None
        )
        return figure_to_png(figure)

    def _repr_mimebundle_(self, **kwargs):
        # Beside the live view, the weights as they are now, for a page without a kernel.
        bundle = super()._repr_mimebundle_(**kwargs)
        if isinstance(bundle, tuple):
            data, metadata = bundle
            return {**data, "image/png": self.png()}, metadata
        return {**(bundle or {}), "image/png": self.png()}

    def state(self) -> dict:
        """What the browser draws from: the synced traits this class declares."""
        return {name: getattr(self, name) for name in STATE}

    def to_html(self, path: str | Path | None = None, *, title: str | None = None) -> str:
        """One self-contained HTML page: this widget's data and script inline, nothing
        fetched, sliders and hover working in any browser offline. Written to `path` if
        given; returned either way."""
        title = title or tr("Attention weights")
        page = PAGE.format(
            title=html.escape(title),
            state=json.dumps(self.state(), ensure_ascii=False).replace("</", "<\\/"),
            script=json.dumps(self._esm).replace("</", "<\\/"),
        )
        if path is not None:
            Path(path).write_text(page, encoding="utf-8")
        return page

    def __repr__(self) -> str:
        return f"BrowserHeatmap(n={len(self.tokens)}, heads={len(self.raw)})"


# The page that to_html writes: a stand-in for the widget model (get, set, on, off,
# save_changes), the module imported from a Blob of its own text.
PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>{title}</title></head>
<body>
<h1 style="font: 600 16px system-ui, sans-serif">{title}</h1>
<div id="widget"></div>
<script type="module">
const state = {state};
const listeners = {{}};
const model = {{
  get: (name) => state[name],
  set: (name, value) => {{
    state[name] = value;
    for (const f of listeners["change:" + name] || []) f();
  }},
  on: (event, f) => {{ (listeners[event] = listeners[event] || []).push(f); }},
  off: (event, f) => {{ listeners[event] = (listeners[event] || []).filter((g) => g !== f); }},
  save_changes: () => {{}},
  send: () => {{}},
}};
const source = {script};
const url = URL.createObjectURL(new Blob([source], {{ type: "text/javascript" }}));
const module = await import(url);
window.nbhelpersHeatmap = module;
window.nbhelpersModel = model;  // what the kernel would change, for scripts and tests
module.default.render({{ model, el: document.getElementById("widget") }});
</script>
</body></html>
"""
