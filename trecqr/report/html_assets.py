"""The HTML report's style sheet and script, inlined into every page (no external file, font
or request: the page opens offline and can be mailed).

Why the script builds the table itself: a run of 8,209 turns has tens of thousands of cells per
run; the page keeps the turns as arrays (the JSON in ``#trecqr-data``) and writes one page of
:data:`PAGE_SIZE` rows at a time into the DOM, so opening, sorting and filtering stay fast.
Every text from the inputs goes into the DOM as ``textContent``, never as markup.

Measures are named by their labels (``D.labels``: compare's MRR, NDCG@3 or ``--label``'s) in
the headers and the measure selector, and by the rule they follow (``D.rules``: ``trec_eval
9.0.8 recip_rank``) in their tooltips.

Why the table's headers carry short run names (the words all names share dropped, the rest cut
in the middle; the full name in the tooltip): a header per run and column group, with names as
long as a paper's file names, pushed the last columns out of the window. Why document ids get
a break opportunity after each ``/ _ - . ? & =``: a URL id then wraps at its parts, not
mid-word. Why passages are clamped to whole lines (a click shows all): a box of a fixed height
cut the third line in half. ``#turn=ID`` in the address opens that turn, and opening a turn
writes it there, so a turn can be linked to.
"""

PAGE_SIZE = 100

CSS = """
body{font:13px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:16px;color:#222}
h1{font-size:18px;margin:0 0 4px}h2{font-size:15px;margin:18px 0 6px}
h3{font-size:13px;margin:10px 0 4px}
table{border-collapse:collapse}td,th{padding:2px 6px;border-bottom:1px solid #e4e4e4}
th{background:#f4f4f4;text-align:left;white-space:nowrap}
#turns th{vertical-align:bottom;white-space:normal}
#turns th .grp{display:block;color:#666;font-weight:400;
font-size:11px}.wide{max-width:100%;overflow-x:auto}td.n,th.n{text-align:right}
.note{color:#555;margin:2px 0}.plots{display:flex;flex-wrap:wrap;gap:8px}
svg.plot{border:1px solid #ddd;background:#fff;font-size:10px}
svg .grid{stroke:#eee}svg .zero{stroke:#bbb}svg .axis{stroke:#888}svg .title{font-weight:600}
#controls{display:flex;flex-wrap:wrap;gap:10px;align-items:center;margin:6px 0}
#controls label{white-space:nowrap}#controls select{max-width:24em}
#turns tbody tr{cursor:pointer}#turns tbody tr:hover{background:#eef4ff}
#turns tbody tr.sel{background:#dde9ff}th button{font:inherit;border:0;background:none;
cursor:pointer;padding:0}th button:after{content:"\\00a0\\2195";color:#aaa}
.pos{color:#1a7f37}.neg{color:#c62828}.unj{color:#b26a00;font-weight:600}
#turn{position:fixed;top:0;right:0;width:50%;height:100%;box-sizing:border-box;overflow:auto;
border-left:1px solid #bbb;padding:8px 14px;background:#fcfcfc;box-shadow:-4px 0 12px #0002}
#turn[hidden]{display:none}#close{float:right}#f-min{width:5em}.utt{margin:2px 0}
.resp{color:#555;margin:0 0 4px 16px}
.cur{font-weight:600}.topk>div{margin-bottom:10px}table.ranking{width:100%}
table.ranking td{vertical-align:top}
th.docid{width:14em}td.docid{overflow-wrap:anywhere}
.passage{color:#444;display:-webkit-box;-webkit-box-orient:vertical;-webkit-line-clamp:3;
overflow:hidden;cursor:pointer}.passage.open{display:block}
tr.upper th .tag,.tag{font-weight:400;font-size:11px;color:#fff;background:#777;border-radius:3px;
padding:0 4px}#hash-note{color:#c62828}
.legend>span{display:inline-block}
.legend .swatch{display:inline-block;width:10px;height:10px;margin:0 4px 0 10px}
.g0{color:#777}.grel{color:#1a7f37;font-weight:600}
"""

SCRIPT = r"""
(function(){
"use strict";
const D = JSON.parse(document.getElementById("trecqr-data").textContent);
const PAGE = D.page_size, R = D.runs.length, N = D.ids.length;
const $ = (id) => document.getElementById(id);
const el = (tag, text, cls) => { const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls; return e; };
const fmt = (v) => v === null || v === undefined ? "-" : v.toFixed(D.places);
const convNum = D.conv.map((c) => { const x = Number(c); return isNaN(x) ? null : x; });
const state = {m: 0, run: R > 1 ? (D.baseline === 0 ? 1 : 0) : 0, base: D.baseline,
  conv: "", depth: "", group: "", sign: "", min: 0, key: "id", dir: 1, page: 0, sel: -1};
let rows = [];
function val(r, m, i) { const v = D.values[r][m][i];
  return v === null && D.complete ? 0 : v; }
function diff(i) { const a = val(state.run, state.m, i), b = val(state.base, state.m, i);
  return a === null || b === null ? null : a - b; }
function idCmp(i, j) {
  const ci = convNum[i], cj = convNum[j];
  if (ci !== null && cj !== null && ci !== cj) return ci - cj;
  if (D.conv[i] !== D.conv[j]) return D.conv[i] < D.conv[j] ? -1 : 1;
  const di = D.depth[i] === null ? 0 : D.depth[i], dj = D.depth[j] === null ? 0 : D.depth[j];
  if (di !== dj) return di - dj;
  return D.ids[i] < D.ids[j] ? -1 : D.ids[i] > D.ids[j] ? 1 : 0; }
function keyOf(key) {
  if (key === "diff") return diff;
  if (key === "depth") return (i) => D.depth[i];
  if (key.startsWith("v:")) { const [, r, m] = key.split(":").map(Number);
    return (i) => val(r, m, i); }
  if (key.startsWith("u:")) { const r = Number(key.slice(2)); return (i) => D.unjudged[r][i]; }
  if (key.startsWith("f:")) { const r = Number(key.slice(2)); return (i) => D.first_rel[r][i]; }
  return null; }
function apply() {
  const conv = state.conv.trim(), depth = state.depth, group = state.group;
  const out = [];
  for (let i = 0; i < N; i++) {
    if (conv && D.conv[i] !== conv) continue;
    if (depth !== "") { const d = D.depth[i];
      const cap = depth.endsWith("+");
      if (cap ? !(d >= Number(depth.slice(0, -1))) : d !== Number(depth)) continue; }
    if (group !== "" && !(D.groups && D.groups[i].includes(Number(group)))) continue;
    if (state.sign || state.min > 0) { const d = diff(i);
      if (d === null) continue;
      if (state.sign === "win" && !(d > 0)) continue;
      if (state.sign === "loss" && !(d < 0)) continue;
      if (state.sign === "tie" && d !== 0) continue;
      if (Math.abs(d) < state.min) continue; }
    out.push(i); }
  const f = keyOf(state.key), dir = state.dir;
  if (f === null) out.sort((i, j) => dir * idCmp(i, j));
  else out.sort((i, j) => { const a = f(i), b = f(j);
    if (a === null || b === null) return a === b ? idCmp(i, j) : a === null ? 1 : -1;
    return a !== b ? dir * (a - b) : idCmp(i, j); });
  rows = out;
  state.page = Math.min(state.page, Math.max(0, Math.ceil(rows.length / PAGE) - 1));
  render(); }
function header() {
  const tr = $("turns").tHead.rows[0]; tr.textContent = "";
  const cols = [["id", "turn"], ["depth", "depth"]];
  if (D.groups) cols.push(["group", "groups"]);
  for (let r = 0; r < R; r++) cols.push(["v:" + r + ":" + state.m, D.runs[r], D.labels[state.m]]);
  cols.push(["diff", "diff"]);
  for (let r = 0; r < R; r++) cols.push(["u:" + r, D.runs[r], "unjudged"]);
  for (let r = 0; r < R; r++) cols.push(["f:" + r, D.runs[r], "1st rel"]);
  for (const [key, label, grp] of cols) {
    const th = el("th", null, key === "id" || key === "group" ? "" : "n");
    if (key === "group") th.textContent = label;
    else { const r = grp ? Number(key.split(":")[1]) : -1;
      const b = el("button", grp ? null : label); b.dataset.key = key;
      if (grp) { b.appendChild(el("span", grp, "grp"));
        const rn = el("span", null, "rn"); rn.appendChild(breakable(D.short_runs[r]));
        b.appendChild(rn);
        th.title = grp + " " + label + (isUpper(r) ? " (upper bound)" : "") +
          (key.startsWith("v:") ? " (" + D.rules[state.m] + ")" : ""); }
      b.addEventListener("click", () => { state.dir = state.key === key ? -state.dir :
        (key === "id" ? 1 : -1); state.key = key; state.page = 0; apply(); });
      th.appendChild(b); }
    th.dataset.key = key; tr.appendChild(th); } }
function render() {
  const body = $("turns").tBodies[0], frag = document.createDocumentFragment();
  const start = state.page * PAGE, end = Math.min(rows.length, start + PAGE);
  for (let p = start; p < end; p++) { const i = rows[p], tr = el("tr");
    tr.dataset.qid = D.ids[i]; tr.dataset.index = i;
    if (i === state.sel) tr.className = "sel";
    tr.appendChild(el("td", D.ids[i])); tr.appendChild(el("td", D.depth[i], "n"));
    if (D.groups) tr.appendChild(el("td", D.groups[i].map((g) => D.group_names[g]).join(", ")));
    for (let r = 0; r < R; r++) tr.appendChild(el("td", fmt(val(r, state.m, i)), "n"));
    const d = diff(i);
    tr.appendChild(el("td", d === null ? "-" : (d > 0 ? "+" : "") + fmt(d),
      "n diff " + (d > 0 ? "pos" : d < 0 ? "neg" : "")));
    for (let r = 0; r < R; r++) { const u = D.unjudged[r][i];
      tr.appendChild(el("td", u, u ? "n unj" : "n")); }
    for (let r = 0; r < R; r++) tr.appendChild(el("td", D.first_rel[r][i] === null ? "-" :
      D.first_rel[r][i], "n"));
    tr.addEventListener("click", () => showTurn(i));
    frag.appendChild(tr); }
  body.textContent = ""; body.appendChild(frag);
  $("count").textContent = rows.length + " of " + N + " turns";
  $("pageinfo").textContent = rows.length ? "rows " + (start + 1) + "-" + end : "no rows";
  $("prev").disabled = state.page === 0; $("next").disabled = end >= rows.length;
  $("turns").dataset.rendered = String(Number($("turns").dataset.rendered || 0) + 1); }
function isUpper(r) { return (D.upper_bounds || []).includes(r); }
function breakable(text) {  // a break opportunity after each separator of a document id
  const f = document.createDocumentFragment();
  for (const part of String(text).split(/(?<=[\/_\-.?&=])/)) {
    f.appendChild(document.createTextNode(part)); f.appendChild(el("wbr")); }
  return f; }
function firstText(first) { return first === null ? "no relevant document in the ranking" :
  "first relevant document at rank " + first; }
function setHash(id) { const url = location.href.split("#")[0] +
    (id === null ? "" : "#turn=" + encodeURIComponent(id));
  try { history.replaceState(null, "", url); } catch (e) { /* file: in some browsers */ } }
function openFromHash() {
  const m = /^#turn=(.*)$/.exec(location.hash), note = $("hash-note");
  note.hidden = true;
  if (!m) return;
  let id; try { id = decodeURIComponent(m[1]); } catch (e) { id = m[1]; }
  const i = D.ids.indexOf(id);
  if (i < 0) { note.textContent = "#turn=" + id + ": no such turn on this page";
    note.hidden = false; return; }
  if ($("turn").dataset.qid === id && !$("turn").hidden) return;
  const p = rows.indexOf(i);
  if (p >= 0 && Math.floor(p / PAGE) !== state.page) {
    state.page = Math.floor(p / PAGE); render(); }
  showTurn(i); }
function gradeText(i, c) { const g = D.grades[i][String(c)];
  return g === undefined ? "unjudged" : String(g); }
function showTurn(i) {
  state.sel = i; const box = $("turn"); box.textContent = ""; box.hidden = false;
  box.dataset.qid = D.ids[i];
  const close = el("button", "close"); close.id = "close";
  close.addEventListener("click", () => { box.hidden = true; state.sel = -1; setHash(null);
    render(); });
  box.appendChild(close); box.appendChild(el("h2", "turn " + D.ids[i]));
  setHash(D.ids[i]);
  const turns = D.conversation[D.conv[i]], ctx = D.context && D.context[i];
  if (turns) { box.appendChild(el("h3", "conversation"));
    const ol = el("ol"); ol.id = "conversation";
    if (ctx) for (let j = 0; j < ctx.length; j += 2) { const li = el("li");
      li.appendChild(el("div", ctx[j], "utt"));
      if (j + 1 < ctx.length) li.appendChild(el("div", ctx[j + 1], "resp"));
      ol.appendChild(li); }
    for (const [depth, qid, text, resp] of turns) {
      const cur = qid === D.ids[i] || (depth !== null && depth === D.depth[i]);
      if (ctx && !cur) continue;
      if (D.depth[i] !== null && depth !== null && depth > D.depth[i]) continue;
      const li = el("li", null, cur ? "cur" : ""); li.dataset.qid = qid;
      li.appendChild(el("div", text, "utt"));
      if (resp && !cur) li.appendChild(el("div", resp, "resp"));
      ol.appendChild(li); }
    box.appendChild(ol); }
  const rw = el("table"); rw.id = "rewrites";
  const addRw = (name, text) => { const tr = el("tr"); tr.appendChild(el("th", name));
    tr.appendChild(el("td", text === null || text === undefined ? "(none)" : text));
    tr.dataset.run = name; rw.appendChild(tr); };
  for (let r = 0; r < R; r++) if (D.rewrites[r]) addRw(D.runs[r], D.rewrites[r][i]);
  if (D.manual) addRw("manual rewrite", D.manual[i]);
  if (rw.rows.length) { box.appendChild(el("h3", "rewrites")); box.appendChild(rw); }
  box.appendChild(el("h3", "top " + D.k));
  const wrap = el("div", null, "topk");
  for (let r = 0; r < R; r++) { const div = el("div"); div.dataset.run = D.runs[r];
    const first = D.first_rel[r][i];
    const h3 = el("h3", D.runs[r] + (isUpper(r) ? " (upper bound)" : "") + ": ");
    h3.appendChild(el("span", firstText(first), "first")); div.appendChild(h3);
    const t = el("table", null, "ranking"); const h = el("tr");
    for (const c of ["rank", "document", "grade"].concat(D.text ? ["passage"] : []))
      h.appendChild(el("th", c, c === "document" ? "docid" : ""));
    t.appendChild(h);
    D.topk[r][i].forEach((c, p) => { const tr = el("tr"); tr.appendChild(el("td", p + 1, "n"));
      const doc = el("td", null, "docid"); doc.appendChild(breakable(D.docs[c]));
      tr.appendChild(doc); const g = gradeText(i, c);
      tr.appendChild(el("td", g, "grade " + (g === "unjudged" ? "unj" :
        Number(g) >= D.relevance_level ? "grel" : "g0")));
      if (D.text) { const td = el("td"), ps = el("div", D.text[c], "passage");
        ps.title = "click: the whole passage";
        ps.addEventListener("click", () => ps.classList.toggle("open"));
        td.appendChild(ps);
        tr.appendChild(td); }
      t.appendChild(tr); });
    div.appendChild(t); wrap.appendChild(div); }
  box.appendChild(wrap);
  for (const tr of $("turns").tBodies[0].rows)
    tr.className = Number(tr.dataset.index) === i ? "sel" : "";
  box.dataset.shown = String(Number(box.dataset.shown || 0) + 1); }
function option(sel, value, label) { const o = el("option", label); o.value = value;
  sel.appendChild(o); }
function controls() {
  D.labels.forEach((m, k) => { option($("f-measure"), k, m);
    $("f-measure").options[k].title = D.rules[k]; });
  D.runs.forEach((r, k) => { const label = r + (isUpper(k) ? " (upper bound)" : "");
    option($("f-run"), k, label); option($("f-base"), k, label); });
  $("f-run").value = state.run; $("f-base").value = state.base;
  option($("f-depth"), "", "all");
  for (const d of D.depth_labels) option($("f-depth"), d, d);
  option($("f-group"), "", "all");
  (D.group_names || []).forEach((g, k) => option($("f-group"), k, g));
  if (!D.groups) $("f-group").parentNode.hidden = true;
  const on = (id, ev, f) => $(id).addEventListener(ev, () => { f($(id).value);
    state.page = 0; apply(); });
  on("f-measure", "change", (v) => { state.m = Number(v);
    $("f-measure").title = D.rules[state.m]; header(); });
  $("f-measure").title = D.rules[state.m];
  on("f-run", "change", (v) => { state.run = Number(v); header(); });
  on("f-base", "change", (v) => { state.base = Number(v); header(); });
  on("f-conv", "input", (v) => { state.conv = v; });
  on("f-depth", "change", (v) => { state.depth = v; });
  on("f-group", "change", (v) => { state.group = v; });
  on("f-sign", "change", (v) => { state.sign = v; });
  on("f-min", "input", (v) => { state.min = Math.abs(Number(v)) || 0; });
  $("prev").addEventListener("click", () => { state.page--; render(); });
  $("next").addEventListener("click", () => { state.page++; render(); }); }
controls(); header(); apply(); openFromHash();
window.addEventListener("hashchange", openFromHash);
document.body.dataset.ready = "1";
window.trecqrReadyMs = performance.now();
})();
"""
