// An attention heatmap drawn in the browser (anywidget's module contract: export default
// { render }). The kernel sends the raw scores q_i·k_j once; temperature, the √d_k
// scaling, the causal mask and the choice of head are recomputed and redrawn here, with no
// round trip to the kernel. The formulas are the course's (nbhelpers/attention.py,
// nbhelpers/masks.py); tests/browser/test_browser_heatmap.py runs these functions in
// Chromium on the same inputs as nbhelpers and compares.

// s_ij = q_i·k_j / √d_k (or q_i·k_j unscaled), then / T
export function scores(raw, dK, scaled, temperature) {
  const divisor = (scaled ? Math.sqrt(dK) : 1) * temperature;
  return raw.map((row) => row.map((x) => x / divisor));
}

// s + M, with M_ij = -inf above the diagonal (a key in the query's future)
export function addCausalMask(s) {
  return s.map((row, i) => row.map((x, j) => (j > i ? -Infinity : x)));
}

// a_ij = exp(s_ij - max_j s_ij) / Σ_j exp(s_ij - max_j s_ij); a row with every key masked
// gets all zeros, as nbhelpers' softmax gives it
export function softmaxRows(s) {
  return s.map((row) => {
    const top = Math.max(...row);
    if (top === -Infinity) return row.map(() => 0);
    const e = row.map((x) => Math.exp(x - top));
    const total = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / total);
  });
}

// o_i = Σ_j a_ij v_j
export function weightedSum(a, values) {
  return a.map((row) => values[0].map((_, d) => row.reduce((acc, w, j) => acc + w * values[j][d], 0)));
}

// Every step for one state: what the heatmap shows and what a pinned row follows.
export function steps(raw, { dK, scaled, temperature, causal, values }) {
  const scaledOnly = scores(raw, dK, scaled, 1);
  const tempered = scores(raw, dK, scaled, temperature);
  const masked = causal ? addCausalMask(tempered) : tempered;
  const weights = softmaxRows(masked);
  const outputs = values && values.length ? weightedSum(weights, values) : null;
  return { raw, scaled: scaledOnly, tempered, masked, weights, outputs };
}

// viridis at 9 stops, interpolated: the colour map of the course's PNG heatmaps
const VIRIDIS = [
  [68, 1, 84], [71, 44, 122], [59, 81, 139], [44, 113, 142], [33, 144, 141],
  [39, 173, 129], [92, 200, 99], [170, 220, 50], [253, 231, 37],
];
export function viridis(t) {
  const x = Math.min(Math.max(t, 0), 1) * (VIRIDIS.length - 1);
  const k = Math.min(Math.floor(x), VIRIDIS.length - 2);
  const f = x - k;
  return VIRIDIS[k].map((c, i) => Math.round(c + f * (VIRIDIS[k + 1][i] - c)));
}

// the course's rule for text on a cell (nbhelpers/figures/style.py): luminance > 0.5
function inkOn(rgb) {
  return (0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]) / 255 > 0.5 ? "black" : "white";
}

function fill(template, values) {
  return template.replace(/\{(\w+)\}/g, (_, key) => (key in values ? values[key] : `{${key}}`));
}

const fmt = (x) => (x === -Infinity ? "−∞" : x.toFixed(2));
const SUB = (n) => String(n).replace(/\d/g, (d) => "₀₁₂₃₄₅₆₇₈₉"[d]);

function control(labelText, input, readout) {
  const label = document.createElement("label");
  label.className = "nbh-control";
  label.append(labelText, input);
  if (readout) label.append(readout);
  return label;
}

function render({ model, el }) {
  const t = model.get("texts");
  const root = document.createElement("div");
  root.className = "nbh-heatmap";
  // Arrow keys move this widget's sliders, not the notebook's cell cursor. JupyterLab 4 lets
  // the widget see a key first, and nothing above should see it after; Notebook 7 runs its
  // shortcuts first, and skips one only when the focused control itself, which its selectors
  // (`... :focus`) match, is marked data-lm-suppress-shortcuts.
  root.dataset.lmSuppressShortcuts = "true";
  root.addEventListener("keydown", (event) => event.stopPropagation());
  root.addEventListener("focusin", (event) => {
    if (event.target instanceof HTMLElement) event.target.dataset.lmSuppressShortcuts = "true";
  });
  root.innerHTML = `<style>
    .nbh-heatmap { font: 13px system-ui, sans-serif; color: #222; }
    .nbh-controls { display: flex; gap: 18px; align-items: center; flex-wrap: wrap; margin: 4px 0 8px; }
    .nbh-control { display: flex; gap: 6px; align-items: center; }
    .nbh-tip { min-height: 2.6em; margin: 6px 0; font-family: ui-monospace, monospace; white-space: pre-wrap; }
    .nbh-steps { border-collapse: collapse; font-family: ui-monospace, monospace; margin-top: 6px; }
    .nbh-steps td, .nbh-steps th { border: 1px solid #ccc; padding: 2px 6px; text-align: right; }
    .nbh-steps th:first-child, .nbh-steps td:first-child { text-align: left; }
    .nbh-heatmap canvas { cursor: crosshair; }
  </style>`;
  const controls = document.createElement("div");
  controls.className = "nbh-controls";
  const temperature = Object.assign(document.createElement("input"), {
    type: "range", min: model.get("temperature_range")[0], max: model.get("temperature_range")[1],
    step: 0.05, value: model.get("temperature"),
  });
  temperature.setAttribute("aria-label", t.temperature);
  const temperatureReadout = document.createElement("span");
  const scaled = Object.assign(document.createElement("input"), { type: "checkbox", checked: model.get("scaled") });
  const causal = Object.assign(document.createElement("input"), { type: "checkbox", checked: model.get("causal") });
  controls.append(control(t.temperature + " T", temperature, temperatureReadout));
  controls.append(control(t.scale, scaled), control(t.causal, causal));
  const heads = model.get("raw").length;
  const head = Object.assign(document.createElement("input"), { type: "range", min: 0, max: heads - 1, step: 1, value: model.get("head") });
  head.setAttribute("aria-label", t.head);
  const headReadout = document.createElement("span");
  if (heads > 1) controls.append(control(t.head, head, headReadout));
  const canvas = document.createElement("canvas");
  const tip = document.createElement("div");
  tip.className = "nbh-tip";
  tip.textContent = t.hint;
  const table = document.createElement("table");
  table.className = "nbh-steps";
  root.append(controls, canvas, tip, table);
  el.append(root);

  const tokens = model.get("tokens");
  const n = tokens.length;
  const cell = Math.max(28, Math.min(56, Math.floor(480 / n)));
  const margin = 64;
  const ratio = window.devicePixelRatio || 1;
  canvas.width = (margin + n * cell + 8) * ratio;
  canvas.height = (margin + n * cell + 8) * ratio;
  canvas.style.width = `${margin + n * cell + 8}px`;
  canvas.style.height = `${margin + n * cell + 8}px`;
  const ctx = canvas.getContext("2d");
  ctx.scale(ratio, ratio);
  let current = null;
  let hovered = null;
  el.nbhTimings = [];

  function state() {
    return {
      dK: model.get("d_k"), scaled: model.get("scaled"), temperature: model.get("temperature"),
      causal: model.get("causal"), values: model.get("values"),
    };
  }

  function draw() {
    const k = model.get("head");
    current = steps(model.get("raw")[k], state());
    // The controls show the state, whoever changed it: a key here, or Python in the kernel.
    temperature.value = model.get("temperature");
    scaled.checked = model.get("scaled");
    causal.checked = model.get("causal");
    head.value = k;
    temperatureReadout.textContent = Number(model.get("temperature")).toFixed(2);
    headReadout.textContent = String(k);
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.font = `${Math.max(11, Math.min(14, cell / 3))}px system-ui, sans-serif`;
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    const pinned = model.get("pinned");
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const x = margin + j * cell;
        const y = margin + i * cell;
        if (current.masked[i][j] === -Infinity) {
          ctx.fillStyle = "#f0f0f0";
          ctx.fillRect(x, y, cell - 1, cell - 1);
          ctx.fillStyle = "#707070";
          ctx.fillText("×", x + cell / 2, y + cell / 2);
          continue;
        }
        const rgb = viridis(current.weights[i][j]);
        ctx.fillStyle = `rgb(${rgb.join(",")})`;
        ctx.fillRect(x, y, cell - 1, cell - 1);
        ctx.fillStyle = inkOn(rgb);
        ctx.fillText(current.weights[i][j].toFixed(2), x + cell / 2, y + cell / 2);
      }
    }
    ctx.fillStyle = "#222";
    for (let i = 0; i < n; i++) {
      ctx.textAlign = "right";
      ctx.fillText(tokens[i], margin - 6, margin + i * cell + cell / 2);
      ctx.save();
      ctx.translate(margin + i * cell + cell / 2, margin - 6);
      ctx.textAlign = "center";
      ctx.fillText(tokens[i], 0, -4);
      ctx.restore();
    }
    ctx.textAlign = "left";
    ctx.fillText(t.keys, margin + cell, margin - 40);
    ctx.fillText(`${t.queries} ↓`, 2, margin - 40); // horizontal: Japanese is not rotated
    if (pinned >= 0 && pinned < n) {
      ctx.strokeStyle = "#d62728";
      ctx.lineWidth = 2;
      ctx.strokeRect(margin - 1, margin + pinned * cell - 1, n * cell + 1, cell + 1);
    }
    showTip();
    showSteps();
    el.dataset.redraws = String(Number(el.dataset.redraws || 0) + 1);
  }

  function formula(i, j) {
    const s = state();
    const raw = current.raw[i][j];
    const vars = { i: SUB(i), j: SUB(j), q: tokens[i], k: tokens[j], raw: fmt(raw),
      root: fmt(Math.sqrt(s.dK)), dk: s.dK, T: Number(s.temperature).toFixed(2),
      s: fmt(current.tempered[i][j]), a: current.weights[i][j].toFixed(3) };
    const lines = [fill(t.cell, vars)];
    lines.push(fill(s.scaled ? t.score_scaled : t.score_raw, vars));
    if (current.masked[i][j] === -Infinity) lines.push(fill(t.blocked, vars));
    else lines.push(fill(t.weight, vars));
    return lines.join("\n");
  }

  function showTip() {
    if (hovered) tip.textContent = formula(hovered[0], hovered[1]);
  }

  function showSteps() {
    const i = model.get("pinned");
    table.replaceChildren();
    if (!(i >= 0 && i < n)) return;
    const head = table.insertRow();
    head.append(...[fill(t.pinned, { q: tokens[i], i: SUB(i) }), ...tokens].map((text) => {
      const th = document.createElement("th");
      th.textContent = text;
      return th;
    }));
    const rows = [
      [t.step_raw, current.raw[i]],
      [model.get("scaled") ? t.step_scaled : t.step_unscaled, current.scaled[i]],
      [t.step_tempered, current.tempered[i]],
      [t.step_masked, current.masked[i]],
      [t.step_softmax, current.weights[i]],
    ];
    for (const [label, row] of rows) {
      const tr = table.insertRow();
      tr.insertCell().textContent = label;
      for (const x of row) tr.insertCell().textContent = fmt(x);
    }
    if (current.outputs) {
      const tr = table.insertRow();
      tr.insertCell().textContent = t.step_output;
      const out = tr.insertCell();
      out.colSpan = n;
      out.textContent = `[${current.outputs[i].map((x) => x.toFixed(3)).join(", ")}]`;
    }
  }

  // A control's event -> the model -> draw, timed from the event (key press or pointer)
  function changed(event, name, value) {
    model.set(name, value); // its change event redraws, before set returns
    el.nbhTimings.push(performance.now() - event.timeStamp);
    model.save_changes();
  }
  temperature.addEventListener("input", (e) => changed(e, "temperature", Number(temperature.value)));
  scaled.addEventListener("change", (e) => changed(e, "scaled", scaled.checked));
  causal.addEventListener("change", (e) => changed(e, "causal", causal.checked));
  head.addEventListener("input", (e) => changed(e, "head", Number(head.value)));

  function cellAt(event) {
    const box = canvas.getBoundingClientRect();
    const j = Math.floor((event.clientX - box.left - margin) / cell);
    const i = Math.floor((event.clientY - box.top - margin) / cell);
    return i >= 0 && i < n && j >= 0 && j < n ? [i, j] : null;
  }
  canvas.addEventListener("pointermove", (event) => {
    hovered = cellAt(event);
    if (hovered) {
      showTip();
      el.nbhTimings.push(performance.now() - event.timeStamp);
    }
  });
  canvas.addEventListener("click", (event) => {
    const at = cellAt(event);
    if (at) changed(event, "pinned", model.get("pinned") === at[0] ? -1 : at[0]);
  });
  // the kernel may change the state too (a new head's data, a slider set from Python)
  const redraw = () => draw();
  for (const name of ["raw", "temperature", "scaled", "causal", "head", "pinned", "values"]) {
    model.on(`change:${name}`, redraw);
  }
  draw();
  return () => {
    for (const name of ["raw", "temperature", "scaled", "causal", "head", "pinned", "values"]) {
      model.off(`change:${name}`, redraw);
    }
  };
}

export default { render };
