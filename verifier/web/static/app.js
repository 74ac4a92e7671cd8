// bankproof workbench: the page keeps the problem and the toggle grid; the server answers each
// state (POST /api/evaluate). Every string from the server or the user goes in as text, never HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { problem: null, grid: null, access: null, instruction: null, answer: null, ttgir: null };
let latest = 0; // the newest evaluate request; older answers are dropped

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else if (k === "onclick") e.addEventListener("click", v);
    else e[k] = v;
  }
  for (const c of children) e.append(c instanceof Node ? c : String(c));
  return e;
}

function showError(message) {
  const box = $("error");
  box.hidden = !message;
  box.textContent = message || "";
}

// every API call carries the token the server put in this page (a page of another site cannot read it)
const TOKEN = document.querySelector('meta[name="bankproof-token"]').content;

async function call(name, body) {
  const res = await fetch("/api/" + name, {
    method: "POST", headers: { "Content-Type": "application/json", "X-Bankproof-Token": TOKEN },
    body: JSON.stringify(body),
  });
  let data;
  try { data = await res.json(); } catch (e) { data = { ok: false, error: "the server sent no JSON (" + res.status + ")" }; }
  if (!res.ok || !data.ok) throw new Error(data.error || ("HTTP " + res.status));
  return data;
}

// ----- the problem form ------------------------------------------------------------------------
function accessRow(a) {
  const kind = el("select", { class: "kind" }, el("option", {}, "store"), el("option", {}, "load"));
  kind.value = a.kind || "load";
  const row = el("div", { class: "access" },
    el("input", { class: "name", value: a.name || "", placeholder: "name" }), kind,
    el("input", { class: "instr", value: a.instr || "auto", placeholder: "instr" }),
    el("textarea", { class: "layout", rows: 2, spellcheck: false, value: a.layout || "" }),
    el("button", { type: "button", title: "remove", onclick: () => row.remove() }, "×"));
  return row;
}

function fillForm(p) {
  $("memory").value = p.memory || "";
  $("shape").value = p.shape || "";
  $("dtype").value = p.dtype || "";
  $("arch").value = p.arch || "sm90";
  $("dims").value = p.dims || "";
  $("units").value = p.units || "element";
  $("base_align").value = p.base_align || 0;
  const list = $("access-list");
  list.replaceChildren(el("div", { class: "access" }, el("b", {}, "name"), el("b", {}, "kind"),
    el("b", {}, "instruction"), el("b", {}, "layout (any notation)"), el("span")));
  for (const a of p.accesses || []) list.append(accessRow(a));
}

function readForm() {
  const accesses = [...document.querySelectorAll("#access-list .access")].filter((r) => r.querySelector(".layout"))
    .map((r) => ({ name: r.querySelector(".name").value.trim(), kind: r.querySelector(".kind").value,
      instr: r.querySelector(".instr").value.trim() || "auto", layout: r.querySelector(".layout").value }));
  const p = { memory: $("memory").value, shape: $("shape").value, dtype: $("dtype").value, arch: $("arch").value,
    dims: $("dims").value, accesses };
  if ($("units").value !== "element") { p.units = $("units").value; p.base_align = Number($("base_align").value) || 0; }
  return p;
}

// ----- evaluation -----------------------------------------------------------------------------
async function refresh() {
  const id = ++latest;
  document.body.dataset.busy = "1";
  const req = { ...state.problem, grid: state.grid };
  if (state.access) req.access = state.access;
  if (state.instruction !== null) req.instruction = state.instruction;
  try {
    const answer = await call("evaluate", req);
    if (id !== latest) return;
    showError("");
    document.body.dataset.rejected = "0";
    state.answer = answer;
    if (answer.grid) state.grid = answer.grid.cells;
    render(answer);
    scheduleProof();
  } catch (e) {
    if (id !== latest) return;
    showError(e.message);
    clearVerdicts();
  } finally {
    if (id === latest) {
      document.body.dataset.busy = "0";
      document.body.dataset.seq = String(Number(document.body.dataset.seq) + 1);
    }
  }
}

// A rejected input has no verdicts: whatever the page showed belonged to the previous problem,
// so it is cleared (and its background proof dropped) rather than left looking current.
function clearVerdicts() {
  state.answer = null;
  clearTimeout(proofTimer);
  proofId++;
  const status = $("z3-status");
  status.replaceChildren();
  status.dataset.verdict = "";
  for (const id of ["grid", "accesses", "counterexample", "algebra-body", "scope-body", "matrices-body",
    "action-body"]) $(id).replaceChildren();
  for (const id of ["formula", "scope-info", "action-status"]) $(id).textContent = "";
  $("grid-note").textContent = "No layout: the input above was rejected.";
  $("grid").dataset.cells = "";
  document.body.dataset.rejected = "1";
}

function load(problem) {
  state.problem = problem;
  state.grid = null; state.access = null; state.instruction = null;
  $("action-body").replaceChildren(); $("action-status").textContent = "";
  return refresh();
}

function render(a) {
  renderGrid(a.grid);
  $("formula").textContent = a.formula || "(not linear)";
  renderAccesses(a.accesses);
  renderAlgebra(a.accesses);
  renderScope(a);
  renderMatrices(a.matrices);
}

function renderGrid(g) {
  const table = $("grid");
  if (!g) {
    table.replaceChildren();
    $("grid-note").textContent = "This memory layout is not linear (padded): no toggles.";
    table.dataset.cells = "";
    return;
  }
  $("grid-note").textContent = "A cell XORs a segment bit (row) into a bank bit (column) of every address.";
  const head = el("tr", {}, el("th", {}, "segment \\ bank"));
  g.cols.forEach((c, j) => head.append(el("th", { title: g.col_bases[j] }, c + " (" + g.col_bases[j] + ")")));
  const rows = [head];
  g.cells.forEach((row, i) => {
    const tr = el("tr", {}, el("th", { title: g.row_bases[i] }, g.rows[i] + " (" + g.row_bases[i] + ")"));
    row.forEach((v, j) => {
      const b = el("button", { type: "button", class: v ? "on" : "", "data-row": i, "data-col": j,
        title: g.row_bases[i] + " → " + g.col_bases[j],
        onclick: () => { state.grid[i][j] ^= 1; b.classList.toggle("on"); refresh(); } }, v ? "1" : "0");
      tr.append(el("td", {}, b));
    });
    rows.push(tr);
  });
  table.replaceChildren(...rows);
  table.dataset.cells = JSON.stringify(g.cells);
}

function badge(ok) { return el("span", { class: "badge " + (ok ? "ok" : "bad") }, ok ? "conflict-free" : "conflict"); }

function renderAccesses(list) {
  const rows = [el("tr", {}, ...["access", "kind", "instruction", "instructions", "wavefronts", "ideal",
    "max per instruction", "verdict", "count rests on"].map((h) => el("th", {}, h)))];
  for (const a of list) {
    rows.push(el("tr", { "data-access": a.name },
      el("td", {}, a.name), el("td", {}, a.kind), el("td", {}, a.instr), el("td", {}, a.instructions),
      el("td", { class: "wavefronts" }, a.wavefronts), el("td", { class: "ideal" }, a.ideal),
      el("td", { class: "per-instruction" }, a.max_per_instruction), el("td", {}, badge(a.conflict_free)),
      el("td", {}, a.rests_on)));
  }
  $("accesses").replaceChildren(...rows);
  const box = $("counterexample");
  box.replaceChildren();
  for (const a of list) {
    const c = a.conflict;
    if (!c) continue;
    const coord = (x) => Object.entries(x).map(([k, v]) => k + "=" + v).join(", ");
    box.append(el("p", { class: "cx", "data-access": a.name },
      el("b", {}, a.name + ": "), "lanes " + c.lanes[0] + " and " + c.lanes[1] + " of instruction " +
      c.instruction + " both reach bank " + c.bank + " at different words: (" + coord(c.coords[0]) +
      ") byte " + c.byte_addresses[0] + ", (" + coord(c.coords[1]) + ") byte " + c.byte_addresses[1]));
  }
}

function renderAlgebra(list) {
  const body = $("algebra-body");
  body.replaceChildren();
  for (const a of list) {
    const g = a.algebra;
    const div = el("div", { class: "alg", "data-access": a.name }, el("h3", {}, a.name));
    if (!g) { div.append("the memory layout is not linear: no Lemma 9.4"); body.append(div); continue; }
    if (!g.applies) { div.append("Lemma 9.4 does not apply: " + g.reason); body.append(div); continue; }
    const fmt = (v) => "{" + v.join(", ") + "}";
    const lemma = g.per_instruction;
    const counted = a.max_per_instruction;
    div.append(
      el("div", {}, "M_Seg basis: ", el("code", {}, fmt(g.segment_basis))),
      el("div", {}, "thread span (lanes sharing a wavefront): ", el("code", {}, fmt(g.thread_span))),
      el("div", {}, "intersection (conflict directions): ", el("code", {}, fmt(g.intersection))),
      el("div", {}, "Lemma 9.4: " + g.phases + " × 2^" + g.dim + " = ", el("b", { class: "alg-count" }, lemma),
        " wavefronts per instruction; enumerated: ", el("b", { class: "enum-count" }, counted), " ",
        el("span", { class: lemma === counted ? "match" : "mismatch" }, lemma === counted ? "equal" : "DIFFERENT")));
    if (g.reason) div.append(el("div", {}, "(paper's hypotheses fail: " + g.reason + ")"));
    body.append(div);
  }
}

function renderScope(a) {
  const s = a.scope;
  const pick = $("scope-access");
  pick.replaceChildren(...a.accesses.map((x) => el("option", { value: x.name }, x.name)));
  pick.value = s.access;
  const inst = $("scope-instruction");
  inst.max = s.instructions - 1;
  inst.value = s.instruction;
  const acc = a.accesses.find((x) => x.name === s.access);
  $("scope-info").textContent = " " + s.instr + ", instruction " + s.instruction + " of " + s.instructions +
    ": " + acc.per_instruction[s.instruction] + " wavefronts";
  const cx = acc.conflict && acc.conflict.instruction === s.instruction ? acc.conflict.lanes : [];
  const body = $("scope-body");
  body.replaceChildren();
  body.className = "scope";
  s.groups.forEach((group, gi) => {
    const segs = new Set();
    const conflict = new Set();
    for (const [bank, words] of Object.entries(group)) {
      const ws = Object.keys(words);
      if (ws.length > 1) conflict.add(Number(bank));
      for (const w of ws) segs.add(Math.floor(Number(w) / 32));
    }
    const head = el("tr", {}, el("th", {}, "segment"));
    for (let b = 0; b < 32; b++) head.append(el("th", {}, b));
    const rows = [head];
    for (const seg of [...segs].sort((x, y) => x - y)) {
      const tr = el("tr", {}, el("th", {}, seg));
      for (let b = 0; b < 32; b++) {
        const lanes = (group[String(b)] || {})[String(seg * 32 + b)] || [];
        const cls = lanes.length ? (conflict.has(b) ? "conflict" : "hit") : "";
        const pair = lanes.some((l) => cx.includes(l)) ? " pair" : "";
        tr.append(el("td", { class: cls + pair, title: lanes.length ? "lanes " + lanes.join(", ") : "" },
          lanes.length ? lanes.join(",") : ""));
      }
      rows.push(tr);
    }
    body.append(el("p", {}, "wavefront group " + gi + (conflict.size ? " (banks with several words: " +
      [...conflict].join(", ") + ")" : "")), el("table", {}, ...rows));
  });
}

function renderMatrices(ms) {
  const body = $("matrices-body");
  body.replaceChildren();
  for (const m of ms) {
    const lit = new Set(m.lit.map(([r, c]) => r + ":" + c));
    const groups = el("tr", {}, el("th", {}, ""), ...m.groups.map(([g, n]) => el("th", { colSpan: n }, g)));
    const head = el("tr", {}, el("th", {}, ""), ...m.cols.map((c) => el("th", {}, c)));
    const rows = m.rows.map((r, i) => el("tr", {}, el("th", {}, r), ...m.cells[i].map((v, j) =>
      el("td", { class: (v ? "one" : "") + (lit.has(i + ":" + j) ? " lit" : "") }, v))));
    body.append(el("table", { class: "matrix" }, el("caption", {}, m.title), groups, head, ...rows));
  }
}

// ----- Z3 in the background: every state, the newest only, under a time limit --------------------
const PROOF_LIMIT_S = 10;
let proofTimer = null;
let proofId = 0;

function scheduleProof() {
  const status = $("z3-status");
  clearTimeout(proofTimer);
  const id = ++proofId;
  if (!$("auto-prove").checked) { status.textContent = ""; return; }
  const req = { ...state.problem, grid: state.grid, timeout: PROOF_LIMIT_S };
  const grid = JSON.stringify(state.grid);
  status.dataset.verdict = "";
  status.replaceChildren(el("span", { class: "badge running" }, "Z3: waiting"));
  proofTimer = setTimeout(async () => {
    if (id !== proofId) return;
    status.replaceChildren(el("span", { class: "badge running" }, "Z3: proving (limit " + PROOF_LIMIT_S + " s per access)…"));
    try {
      const d = await call("prove", req);
      if (id !== proofId) return;
      const r = d.result;
      status.replaceChildren(el("span", { class: "badge " + r.verdict }, "Z3 and every engine: " + r.verdict),
        " " + r.accesses.map((a) => a.name + " " + a.proof.status + " (" + (a.engines.z3 ? a.engines.z3.verdict : "-") +
          " by z3, " + a.engines.z3.seconds + " s)").join("; "));
      status.dataset.grid = grid;
      status.dataset.verdict = r.verdict;
      status.dataset.accesses = JSON.stringify(Object.fromEntries(r.accesses.map((a) => [a.name, a.proof.status])));
    } catch (e) {
      if (id !== proofId) return;
      status.replaceChildren(el("span", { class: "badge unknown" }, "Z3: " + e.message));
      status.dataset.verdict = "error";
    }
  }, 300);
}
$("auto-prove").addEventListener("change", scheduleProof);

// ----- the slow calls ----------------------------------------------------------------------------
async function action(name, label, show) {
  const status = $("action-status");
  status.replaceChildren(el("span", { class: "badge running" }, label + "…"));
  document.body.dataset.action = "running";
  try {
    const data = await call(name, { ...state.problem, grid: state.grid, timeout: 10 });
    status.replaceChildren(el("span", { class: "badge ok" }, label + ": done"));
    $("action-body").replaceChildren(...show(data));
  } catch (e) {
    status.replaceChildren(el("span", { class: "badge bad" }, label + ": failed"));
    $("action-body").replaceChildren(el("pre", {}, e.message));
  } finally {
    document.body.dataset.action = "done";
  }
}

function proveView(d) {
  const r = d.result;
  const out = [el("p", {}, "verdict: ", el("span", { class: "badge " + r.verdict, id: "prove-verdict" }, r.verdict),
    " (Z3 limit 10 s per access)")];
  for (const a of r.accesses) {
    const eng = Object.entries(a.engines).map(([k, v]) => k + ": " + v.verdict +
      (v.wavefronts !== null ? " (" + v.wavefronts + ")" : "") + (v.reason ? " — " + v.reason : ""));
    out.push(el("p", {}, el("b", {}, a.name + ": "), a.proof.status + " by " + a.proof.engine + "; " + eng.join("; ")));
  }
  return out;
}

function synthView(d) {
  const s = d.result.synth;
  const use = el("button", { type: "button", id: "use-synth", onclick: () => {
    $("memory").value = s.memory.notations.formula || s.memory.notations.bases;
    load(readForm());
  } }, "use this layout");
  const out = [el("p", {}, "optimality: ", el("span", { class: "badge " + s.optimality.proof.status, id: "synth-status" },
    s.optimality.proof.status), " — optimal over " + s.optimal_over), use];
  for (const [k, v] of Object.entries(s.memory.notations)) out.push(el("div", {}, el("b", {}, k + ": "), el("code", {}, v)));
  out.push(el("p", {}, "wavefronts: " + d.result.accesses.map((a) => a.name + " " + a.wavefronts).join(", ")));
  return out;
}

function exportView(d) {
  return Object.entries(d.notations).map(([k, v]) => {
    const code = el("code", { class: "notation", "data-notation": k }, v);
    const copy = el("button", { type: "button", onclick: () => navigator.clipboard && navigator.clipboard.writeText(v) }, "copy");
    return el("div", {}, el("b", {}, k + ": "), code, " ", copy);
  });
}

// ----- TTGIR buffers --------------------------------------------------------------------------
function renderBuffers(list) {
  const rows = [el("tr", {}, ...["buffer", "wavefronts", "optimal", "better layout", ""].map((h) => el("th", {}, h)))];
  list.forEach((b) => {
    const better = el("button", { type: "button", onclick: (e) => {
      e.stopPropagation(); fillForm({ ...b.problem, memory: b.better_layout }); load(readForm());
    } }, "better");
    better.disabled = !b.better_layout;
    rows.push(el("tr", { class: "buffer", onclick: () => { fillForm(b.problem); load(readForm()); } },
      el("td", {}, b.buffer), el("td", {}, b.wavefronts), el("td", {}, b.optimal_wavefronts),
      el("td", {}, el("code", {}, b.better_layout || "—")), el("td", {}, better)));
  });
  $("buffers").replaceChildren(...rows);
  $("ttgir").hidden = false;
}

// ----- wiring -----------------------------------------------------------------------------------
$("load").addEventListener("click", () => load(readForm()));
$("add-access").addEventListener("click", () => $("access-list").append(accessRow({ kind: "load" })));
$("reset").addEventListener("click", () => { if (state.grid) { state.grid = state.grid.map((r) => r.map(() => 0)); refresh(); } });
$("scope-access").addEventListener("change", (e) => { state.access = e.target.value; state.instruction = null; refresh(); });
$("scope-instruction").addEventListener("change", (e) => { state.instruction = Number(e.target.value) || 0; refresh(); });
$("prove").addEventListener("click", () => action("prove", "proving with Z3", proveView));
$("synth").addEventListener("click", () => action("synth", "synthesizing", synthView));
$("explain").addEventListener("click", () => action("explain", "explaining", (d) => [el("pre", { id: "explain-text" }, d.text)]));
$("export").addEventListener("click", () => action("export", "exporting", exportView));

(async function start() {
  const res = await fetch("/api/start", { headers: { "X-Bankproof-Token": TOKEN } });
  const s = await res.json();
  $("source").textContent = s.source;
  if (s.ttgir) renderBuffers(s.ttgir);
  fillForm(s.problem);
  await load(readForm());
})();
