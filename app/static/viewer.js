/* deptree tree viewer: plain JS + SVG, no build step, nothing fetched but this service.
 *
 * GET /models fills the model, tagger, decoder and budget controls (the model's
 * taggers, each decoder's budget fields and defaults); POST /parse runs decoder A
 * and, when chosen, decoder B on the same sentences, both with the chosen tagger.
 * Each tree is drawn as arcs over the words (one <g class="arc"> per token, the
 * root arc included), the label at the arc's top and the UPOS under each word.
 * Per-arc confidence (stats.confidence) sets the arc's opacity; arcs whose
 * head or label differ between A and B get class "diff" (orange, dashed, thicker).
 * Every style the exported SVG needs is an attribute, so the download looks the same.
 * A tree wider than its pane is never cut off: the two panes of a comparison stack
 * (each then has the page's width), and a tree still wider scrolls sideways in its own
 * region, with a note that says so and a "Fit to width" toggle that scales it down.
 */
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const STYLE = {
  font: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
  word: "#111111", pos: "#555555", arc: "#1f4e8c", diff: "#c2410c",
  wordSize: 15, posSize: 12, labelSize: 12, pad: 10, levelHeight: 24, minWidth: 36,
};

const state = { catalogue: null, last: null };
const $ = (id) => document.getElementById(id);

// ---- text measuring ------------------------------------------------------------------
const measureCtx = document.createElement("canvas").getContext("2d");
function textWidth(text, size) {
  if (!measureCtx) return text.length * size * 0.6;
  measureCtx.font = `${size}px ${STYLE.font}`;
  return measureCtx.measureText(text).width;
}

// ---- API -----------------------------------------------------------------------------
class ApiError extends Error {
  constructor(status, body) {
    const err = (body && body.error) || {};
    super(err.message || `HTTP ${status}`);
    this.status = status;
    this.code = err.code || "http_error";
  }
}

async function api(path, body, asText = false) {
  const init = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  let resp;
  try {
    resp = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, { error: { code: "network", message: `the service did not answer (${e.message})` } });
  }
  if (!resp.ok) {
    let payload = null;
    try { payload = await resp.json(); } catch (e) { /* not JSON */ }
    throw new ApiError(resp.status, payload);
  }
  return asText ? resp.text() : resp.json();
}

// ---- messages ------------------------------------------------------------------------
function showError(prefix, err) {
  const box = $("error");
  box.textContent = "";
  const strong = document.createElement("strong");
  strong.textContent = `${prefix}: `;
  box.append(strong, `${err.message}`);
  if (err.code) {
    const code = document.createElement("code");
    code.textContent = ` (${err.code}${err.status ? `, HTTP ${err.status}` : ""})`;
    box.append(code);
  }
  box.hidden = false;
}
function clearError() { $("error").hidden = true; $("error").textContent = ""; }
function status(msg) { $("status").textContent = msg; }

// ---- controls built from GET /models -------------------------------------------------
function fillSelect(sel, values, chosen, extra) {
  sel.textContent = "";
  for (const [value, label] of [...(extra || []), ...values.map((v) => [v, v])]) {
    const opt = document.createElement("option");
    opt.value = value;
    opt.textContent = label;
    sel.append(opt);
  }
  if (chosen !== undefined && [...sel.options].some((o) => o.value === chosen)) sel.value = chosen;
}

function decoderInfo(decoder) {
  const model = state.catalogue.models[$("model").value];
  return (model && model.decoders[decoder]) || { fields: [], defaults: {}, params: {} };
}

function buildBudget(side) {
  const box = $(`budget-${side}`);
  box.textContent = "";
  const decoder = $(`decoder-${side}`).value;
  if (!decoder) return;
  const { fields, defaults, params } = decoderInfo(decoder);
  for (const field of fields) {
    // each field as its decoder's spec describes it (GET /models `params`)
    const spec = (params || {})[field] || {};
    const id = `budget-${side}-${field}`;
    const dflt = defaults[field];
    const wrap = document.createElement("div");
    wrap.className = "budget-field";
    wrap.title = spec.doc || "";
    const label = document.createElement("label");
    label.htmlFor = id;
    label.textContent = field;
    let input;
    if (spec.kind === "choice") {
      input = document.createElement("select");
      fillSelect(input, spec.choices || [], dflt === null ? "" : dflt,
        spec.nullable ? [["", "(none)"]] : []);
      wrap.append(label, input);
    } else {
      input = document.createElement("input");
      if (spec.kind === "bool" || typeof dflt === "boolean") {
        input.type = "checkbox";
        input.checked = field === "confidence" ? true : Boolean(dflt);
        wrap.classList.add("check");
        wrap.append(input, label);
      } else {
        if (spec.kind === "int" || spec.kind === "number" || typeof dflt === "number") {
          input.type = "number";
          input.step = spec.kind === "int" ? "1" : "any";
          input.inputMode = "decimal";
        } else {
          input.type = "text";
        }
        input.value = dflt === undefined || dflt === null ? "" : String(dflt);
        input.placeholder = dflt === undefined || dflt === null ? "default" : String(dflt);
        wrap.append(label, input);
      }
    }
    input.id = id;
    input.dataset.field = field;
    box.append(wrap);
  }
}

function budgetValues(side) {
  const out = {};
  for (const input of $(`budget-${side}`).querySelectorAll("input, select")) {
    const field = input.dataset.field;
    if (input.type === "checkbox") {
      if (input.checked) out[field] = true;
      else if (field !== "confidence") out[field] = false;
    } else if (input.value.trim() !== "") {
      out[field] = input.type === "number" ? Number(input.value) : input.value.trim();
    }
  }
  return out;
}

function onModelChange() {
  const model = state.catalogue.models[$("model").value];
  const decoders = model ? Object.keys(model.decoders) : [];
  const dflt = state.catalogue.default_decoder;
  const a = decoders.includes(dflt) ? dflt : decoders[0];
  const b = decoders.find((d) => d === "mst" && d !== a) || decoders.find((d) => d !== a) || "";
  const taggers = (model && model.taggers) || [];
  const wanted = state.catalogue.default_tagger;   // "auto": the most accurate the model has
  fillSelect($("tagger"), taggers, wanted === "auto" ? taggers[taggers.length - 1] : wanted);
  $("tagger-field").hidden = !taggers.length;       // a model without tagger: tagged input only
  fillSelect($("decoder-a"), decoders, a);
  fillSelect($("decoder-b"), decoders, b, [["", "(none)"]]);
  buildBudget("a");
  buildBudget("b");
}

async function loadModels() {
  status("Loading models…");
  try {
    state.catalogue = await api("/models");
  } catch (err) {
    showError("Could not list the models", err);
    status("");
    return;
  }
  const names = Object.keys(state.catalogue.models);
  fillSelect($("model"), names, state.catalogue.default_model || names[0]);
  onModelChange();
  if (!names.length) {
    showError("No model", { message: "the service has no model loaded yet (see GET /ready); " +
      "reload the page in a moment", code: "not_ready" });
    status("");
    return;
  }
  status(`${names.length} model(s) loaded.`);
}

// ---- request -------------------------------------------------------------------------
function sentencesInput() {
  const lines = $("sentences").value.split("\n").map((l) => l.trim()).filter((l) => l);
  return $("pretok").checked ? lines.map((l) => l.split(/\s+/)) : lines;
}

function requestBody(side, output) {
  const body = { sentences: sentencesInput(), model: $("model").value,
    decoder: $(`decoder-${side}`).value, ...budgetValues(side) };
  if ($("tagger").value) body.tagger = $("tagger").value;
  if (output) body.output = output;
  return body;
}

async function onSubmit(event) {
  event.preventDefault();
  clearError();
  const sides = ["a", "b"].filter((s) => $(`decoder-${s}`).value);
  if (!sentencesInput().length) {
    showError("Nothing to parse", { message: "type at least one sentence" });
    return;
  }
  const button = $("parse");
  button.disabled = true;
  $("results").setAttribute("aria-busy", "true");
  status("Parsing…");
  const bodies = sides.map((s) => requestBody(s));
  const results = await Promise.allSettled(bodies.map((b) => api("/parse", b)));
  button.disabled = false;
  $("results").removeAttribute("aria-busy");
  const failed = results.findIndex((r) => r.status === "rejected");
  if (failed >= 0) {
    const side = sides[failed];
    showError(`Decoder ${side.toUpperCase()} (${bodies[failed].decoder})`, results[failed].reason);
    $("results").textContent = "";
    status("The request failed.");
    return;
  }
  state.last = { sides, bodies, responses: results.map((r) => r.value) };
  const ndiff = render(state.last);
  const names = bodies.map((b) => b.decoder).join(" and ");
  status(`Parsed ${state.last.responses[0].sentences.length} sentence(s) with ${names}` +
    (sides.length === 2 ? `; ${ndiff} arc(s) differ.` : "."));
}

// ---- diff ----------------------------------------------------------------------------
/** Ids of tokens whose head or label differ between two parses of one sentence. */
function differingArcs(a, b) {
  const out = new Set();
  if (!a || !b || a.tokens.length !== b.tokens.length) return out;
  a.tokens.forEach((t, i) => {
    const u = b.tokens[i];
    if (t.head !== u.head || t.deprel !== u.deprel) out.add(t.id);
  });
  return out;
}

// ---- drawing -------------------------------------------------------------------------
function el(name, attrs, text) {
  const node = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Levels of the arcs: 1 + the highest level of any arc nested inside (root excluded). */
function arcLevels(tokens) {
  const arcs = tokens.filter((t) => t.head > 0).map((t) => ({
    id: t.id, lo: Math.min(t.id, t.head), hi: Math.max(t.id, t.head) }));
  arcs.sort((x, y) => (x.hi - x.lo) - (y.hi - y.lo));
  const level = {};
  arcs.forEach((arc, i) => {
    let lv = 1;
    for (let j = 0; j < i; j++) {
      const o = arcs[j];
      if (o.lo >= arc.lo && o.hi <= arc.hi) lv = Math.max(lv, level[o.id] + 1);
    }
    level[arc.id] = lv;
  });
  return level;
}

function drawTree(sentence, diff, title) {
  const toks = sentence.tokens;
  const conf = sentence.stats && Array.isArray(sentence.stats.confidence) ? sentence.stats.confidence : null;
  const widths = toks.map((t) => Math.max(STYLE.minWidth, textWidth(t.form, STYLE.wordSize),
    textWidth(t.upos, STYLE.posSize)) + 2 * STYLE.pad);
  const xs = [];
  let x = 10;
  for (const w of widths) { xs.push(x + w / 2); x += w; }
  const width = Math.ceil(x + 10);
  const levels = arcLevels(toks);
  const maxLevel = Math.max(0, ...Object.values(levels));
  const top = 16;
  const baseY = top + (maxLevel + 1) * STYLE.levelHeight + 14;
  const height = baseY + STYLE.wordSize + STYLE.posSize + 22;
  const svg = el("svg", { xmlns: SVG_NS, width, height, viewBox: `0 0 ${width} ${height}`,
    role: "img", "font-family": STYLE.font, class: "tree" });
  svg.append(el("title", {}, title));
  svg.append(el("rect", { x: 0, y: 0, width, height, fill: "#ffffff" }));
  const byId = (id) => xs[id - 1];
  const arcsG = el("g", { class: "arcs" });
  toks.forEach((t, i) => {
    const isDiff = diff.has(t.id);
    const c = conf && typeof conf[i] === "number" ? conf[i] : null;
    const color = isDiff ? STYLE.diff : STYLE.arc;
    const opacity = c === null ? 1 : 0.2 + 0.8 * Math.max(0, Math.min(1, c));
    const g = el("g", { class: isDiff ? "arc diff" : "arc", "data-dep": t.id, "data-head": t.head,
      "data-label": t.deprel, stroke: color, fill: "none" });
    if (c !== null) g.setAttribute("data-confidence", c.toFixed(3));
    const dx = byId(t.id);
    const y0 = baseY - 4;
    let peakX, peakY, d;
    if (t.head === 0) {
      peakX = dx; peakY = top + 8;
      d = `M ${dx} ${peakY + 8} L ${dx} ${y0 - 6}`;
    } else {
      const hx = byId(t.head) + (t.head < t.id ? 5 : -5);
      const h = levels[t.id] * STYLE.levelHeight;
      peakX = (hx + dx) / 2; peakY = y0 - h;
      const cy = y0 - h / 0.75;
      d = `M ${hx} ${y0} C ${hx} ${cy}, ${dx} ${cy}, ${dx} ${y0 - 6}`;
    }
    const path = el("path", { d, "stroke-width": isDiff ? 2.5 : 1.5, "stroke-opacity": opacity.toFixed(3) });
    if (isDiff) path.setAttribute("stroke-dasharray", "6 3");
    const arrow = el("path", { d: `M ${dx - 4} ${y0 - 7} L ${dx + 4} ${y0 - 7} L ${dx} ${y0} Z`,
      fill: color, "fill-opacity": opacity.toFixed(3), stroke: "none" });
    const lw = textWidth(t.deprel, STYLE.labelSize) + 6;
    const bg = el("rect", { x: peakX - lw / 2, y: peakY - STYLE.labelSize / 2 - 2, width: lw,
      height: STYLE.labelSize + 4, fill: "#ffffff", stroke: "none", rx: 3 });
    const label = el("text", { class: "arc-label", x: peakX, y: peakY + STYLE.labelSize / 2 - 2,
      "text-anchor": "middle", "font-size": STYLE.labelSize, fill: color, stroke: "none",
      "font-weight": isDiff ? "bold" : "normal" }, t.deprel);
    const head = t.head === 0 ? "ROOT" : `${toks[t.head - 1].form} (${t.head})`;
    const tip = `${t.deprel}: ${head} → ${t.form} (${t.id})` +
      (c !== null ? `, confidence ${c.toFixed(2)}` : "") + (isDiff ? ", differs between decoders" : "");
    g.append(el("title", {}, tip), path, arrow, bg, label);
    arcsG.append(g);
  });
  svg.append(arcsG);
  const wordsG = el("g", { class: "words", "text-anchor": "middle" });
  toks.forEach((t, i) => {
    const g = el("g", { class: "word", "data-id": t.id });
    g.append(el("title", {}, `${t.id} ${t.form}: lemma ${t.lemma}, ${t.upos} ${t.xpos}` +
      (t.feats && t.feats !== "_" ? `, ${t.feats}` : "")));
    g.append(el("text", { class: "form", x: xs[i], y: baseY + STYLE.wordSize, "font-size": STYLE.wordSize,
      fill: STYLE.word }, t.form));
    g.append(el("text", { class: "pos", x: xs[i], y: baseY + STYLE.wordSize + STYLE.posSize + 8,
      "font-size": STYLE.posSize, fill: STYLE.pos }, t.upos));
    wordsG.append(g);
  });
  svg.append(wordsG);
  return svg;
}

// ---- panes ---------------------------------------------------------------------------
function fmt(v, digits = 3) {
  if (typeof v !== "number") return String(v);
  if (v !== 0 && Math.abs(v) < 0.01) return v.toExponential(2);
  return Number.isInteger(v) ? String(v) : v.toFixed(digits);
}

function statsList(sentence) {
  const s = sentence.stats || {};
  const items = [["score", fmt(sentence.score)]];
  if ("restarts_used" in s) items.push(["restarts used", fmt(s.restarts_used)]);
  if ("samples_used" in s) items.push(["samples used", fmt(s.samples_used)]);
  if ("seconds_per_token" in s) items.push(["seconds / token", fmt(s.seconds_per_token)]);
  if (s.deadline_hit) items.push(["deadline", "hit"]);
  items.push(["cached", sentence.cached ? "yes" : "no"]);
  if (Array.isArray(s.confidence)) {
    const mean = s.confidence.reduce((a, b) => a + b, 0) / Math.max(1, s.confidence.length);
    items.push(["mean confidence", fmt(mean, 2)]);
  }
  const dl = document.createElement("dl");
  dl.className = "stats";
  for (const [k, v] of items) {
    const dt = document.createElement("dt");
    dt.textContent = k;
    const dd = document.createElement("dd");
    dd.textContent = v;
    dl.append(dt, dd);
  }
  return dl;
}

function button(text, onClick, label) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  if (label) b.setAttribute("aria-label", label);
  b.addEventListener("click", onClick);
  return b;
}

function download(name, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function exportSvg(svg, name) {
  const text = '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(svg);
  download(name, text, "image/svg+xml");
}

async function exportConllu(idx) {
  const { sides } = state.last;
  const side = sides[idx];
  try {
    const text = await api("/parse", requestBody(side, "conllu"), true);
    download(`deptree-${$(`decoder-${side}`).value}.conllu`, text, "text/x-conllu");
  } catch (err) {
    showError(`CoNLL-U export (decoder ${side.toUpperCase()})`, err);
  }
}

function pane(resp, sentence, diff, si, label, other) {
  const section = document.createElement("section");
  section.className = "pane";
  section.dataset.decoder = resp.decoder;
  const h = document.createElement("h3");
  h.textContent = `${label}: ${resp.decoder}`;
  section.append(h, statsList(sentence));
  if (other !== null) {
    const p = document.createElement("p");
    p.className = diff.size ? "diff-summary" : "diff-summary same";
    p.textContent = diff.size ? `${diff.size} arc(s) differ from ${other}: ` +
      [...diff].map((id) => `${sentence.tokens[id - 1].form} (${id})`).join(", ") :
      `Same tree as ${other}.`;
    section.append(p);
  }
  const title = `Dependency tree of sentence ${si + 1} by ${resp.decoder}`;
  const svg = drawTree(sentence, diff, title);
  const scroller = document.createElement("div");
  scroller.className = "scroller";
  scroller.tabIndex = 0;
  scroller.setAttribute("role", "region");
  scroller.setAttribute("aria-label", `${title} (scrolls horizontally)`);
  scroller.append(svg);
  const note = document.createElement("p");
  note.className = "scroll-note";
  note.id = `scroll-note-${si + 1}-${label}`;
  note.hidden = true;
  scroller.setAttribute("aria-describedby", note.id);
  const tools = document.createElement("div");
  tools.className = "tools";
  const fit = button("Fit to width", () => {
    scroller.classList.toggle("fitted");
    updateOverflow(section);
  });
  fit.className = "fit";
  fit.hidden = true;
  tools.append(fit, button("Download SVG", () => exportSvg(svg, `deptree-${si + 1}-${resp.decoder}.svg`),
    `Download the tree of sentence ${si + 1} by ${resp.decoder} as SVG`));
  section.append(scroller, note, tools, tokenTable(sentence, diff));
  return section;
}

/** Side by side only where both trees fit their half; then, for each pane under `root`,
 * the note and the fit toggle of a tree wider than its pane (the SVG's own width). */
function updateOverflow(root) {
  const rows = root.matches(".panes") ? [root] : [...root.querySelectorAll(".panes[data-two]")];
  for (const row of rows) {
    if (!row.dataset.two) continue;
    row.classList.add("two");
    const wide = [...row.querySelectorAll(".scroller")].some((sc) =>
      +sc.querySelector("svg").getAttribute("width") > sc.clientWidth + 1);
    row.classList.toggle("two", !wide);
  }
  const panes = root.matches(".pane") ? [root] : [...root.querySelectorAll(".pane")];
  for (const p of panes) {
    const scroller = p.querySelector(".scroller");
    const natural = +scroller.querySelector("svg").getAttribute("width");
    const fitted = scroller.classList.contains("fitted");
    const over = natural > scroller.clientWidth + 1;
    const note = p.querySelector(".scroll-note");
    const fit = p.querySelector("button.fit");
    note.hidden = fit.hidden = !over;
    fit.textContent = fitted ? "Actual size" : "Fit to width";
    fit.setAttribute("aria-pressed", String(fitted));
    note.textContent = fitted
      ? `Scaled to ${Math.round(100 * scroller.clientWidth / natural)}% to fit the pane; ` +
        "\"Actual size\" shows it full size."
      : `The tree is ${natural} px wide, wider than this pane: scroll it sideways (the bar ` +
        "under it, Shift + mouse wheel, or the arrow keys once it has focus) to read the " +
        "rest, or fit it to the width.";
  }
}

function tokenTable(sentence, diff) {
  const details = document.createElement("details");
  const summary = document.createElement("summary");
  summary.textContent = "Table";
  const table = document.createElement("table");
  const head = table.createTHead().insertRow();
  for (const c of ["id", "form", "lemma", "upos", "head", "deprel", "confidence"]) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = c;
    head.append(th);
  }
  const body = table.createTBody();
  const conf = sentence.stats && sentence.stats.confidence;
  sentence.tokens.forEach((t, i) => {
    const row = body.insertRow();
    if (diff.has(t.id)) row.className = "diff";
    for (const v of [t.id, t.form, t.lemma, t.upos, t.head, t.deprel,
      Array.isArray(conf) ? fmt(conf[i], 2) : "–"]) row.insertCell().textContent = String(v);
  });
  details.append(summary, table);
  return details;
}

function render({ sides, responses }) {
  const root = $("results");
  root.textContent = "";
  const tools = document.createElement("div");
  tools.className = "tools";
  sides.forEach((side, i) => tools.append(button(
    `Download CoNLL-U (${side.toUpperCase()}: ${responses[i].decoder})`, () => exportConllu(i))));
  root.append(tools);
  let ndiff = 0;
  const [a, b] = responses;
  a.sentences.forEach((sa, si) => {
    const sb = b ? b.sentences[si] : null;
    const diff = sb ? differingArcs(sa, sb) : new Set();
    ndiff += diff.size;
    const block = document.createElement("article");
    block.className = "sentence";
    const h = document.createElement("h2");
    h.textContent = `Sentence ${si + 1}: ${sa.text || sa.tokens.map((t) => t.form).join(" ")}`;
    block.append(h);
    const row = document.createElement("div");
    row.className = b ? "panes two" : "panes";
    if (b) row.dataset.two = "1";
    row.append(pane(a, sa, diff, si, "A", b ? b.decoder : null));
    if (b) row.append(pane(b, sb, diff, si, "B", a.decoder));
    block.append(row);
    root.append(block);
  });
  updateOverflow(root);
  return ndiff;
}

// ---- start ---------------------------------------------------------------------------
document.addEventListener("DOMContentLoaded", () => {
  $("parse-form").addEventListener("submit", onSubmit);
  $("model").addEventListener("change", onModelChange);
  $("decoder-a").addEventListener("change", () => buildBudget("a"));
  $("decoder-b").addEventListener("change", () => buildBudget("b"));
  $("sentences").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) $("parse-form").requestSubmit();
  });
  let pending = 0;
  window.addEventListener("resize", () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => updateOverflow($("results")));
  });
  loadModels();
});
