// The console: threads of every status (filters, search, paging), and a
// page per thread at its own URL (?thread=ID, with ?cp=CHECKPOINT for an
// earlier state): its status, the diagram with the path taken, the
// questions it waits on (answer forms updated in place, never rebuilt
// while someone types), its timeline of supersteps, channel values, runs
// and live events, and the operator's buttons (cancel, fork, delete), each
// behind a confirmation. The page of a thread the server does not show
// (missing, deleted, or another principal's) says so and offers nothing.
// Plain DOM, no framework; every request goes to this server.
"use strict";

const api = new URL("..", document.baseURI).pathname.replace(/\/$/, "");
const $ = (id) => document.getElementById(id);
// REFRESH_MS is how often the shown view is read again.
const REFRESH_MS = 2000;
const PAGE = 20;

let view = null;       // {thread, cp, run} of the thread page, or null for the list
let source = null;     // the EventSource of the followed run
let sourceRun = null;  // its run id
let lastKey = "";      // what the diagram and timeline were drawn for
let cps = [];          // the shown thread's checkpoints, newest first
let thread = null;     // the shown thread
let runs = [];         // its runs, newest first
let answered = null;   // {run, notice} after an answer or a fork, until its run ends
let listCursor = "";   // the next page's cursor

async function call(method, path, body) {
  const opts = { method, headers: {}, credentials: "same-origin" };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const res = await fetch(api + path, opts);
  if (res.status === 204) return null;
  const type = res.headers.get("Content-Type") || "";
  const data = type.includes("json") ? await res.json() : await res.text();
  if (!res.ok) {
    const err = new Error((data && data.detail) || (data && data.title) || res.statusText);
    err.problem = data;
    throw err;
  }
  return data;
}

const enc = encodeURIComponent;
const el = (tag, props, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("data-")) e.dataset[k.slice(5)] = v;
    else e[k] = v;
  }
  e.append(...kids.filter((k) => k !== null && k !== undefined));
  return e;
};
const pretty = (v) => JSON.stringify(v, null, 2);
const time = (s) => {
  if (!s) return "";
  const d = new Date(s);
  return isNaN(d) ? "" : d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "").replace("Z", "");
};
const clock = (s) => {
  const d = new Date(s);
  return isNaN(d) ? "" : d.toISOString().slice(11, 23);
};
const ms = (n) => (n >= 1000 ? (n / 1000).toFixed(2) + " s" : (Math.round(n * 10) / 10) + " ms");
const statusWords = { new: "new", running: "running", interrupted: "waiting on a person", parked: "parked", done: "done", error: "failed", aborted: "aborted" };
const statusBadge = (s, raw) => el("span", { class: "status s-" + s, text: raw ? s : statusWords[s] || s });
// where names the node that asked interrupt p: its node, or for one asked
// inside a subgraph, the path of subgraph nodes down to the child's node.
const where = (p) => (p.path && p.path.length ? [...p.path, p.child_node].join(" › ") : p.node);

// ---- JSON Schema: the answer's form, skeleton and check ----

function typeOf(schema) {
  if (!schema || typeof schema !== "object") return null;
  const t = schema.type;
  if (Array.isArray(t)) return t.find((x) => x !== "null") || null;
  return t || null;
}

const scalar = (t) => t === "boolean" || t === "string" || t === "integer" || t === "number";

function deref(schema, root) {
  for (let i = 0; schema && typeof schema.$ref === "string" && i < 16; i++) {
    if (schema.$ref === "#") schema = root;
    else if (schema.$ref.startsWith("#/$defs/")) schema = (root.$defs || {})[schema.$ref.slice(8)];
    else break;
  }
  return schema;
}

// skeleton is the value a JSON answer box starts from: the schema's
// default, else its first enum or const value, else the zero value of its
// type (an object holds every declared property, each its own skeleton; a
// property that is not required and may be null is null). It is never
// null unless the schema allows only null, so pressing Answer on an
// untouched card does not send null for an answer that needs a value.
function skeleton(schema, depth = 0, root = schema) {
  if (!schema || typeof schema !== "object" || depth > 16) return {};
  if (schema.$ref === "#") return skeleton(root, depth + 1, root);
  if (typeof schema.$ref === "string" && schema.$ref.startsWith("#/$defs/")) return skeleton((root.$defs || {})[schema.$ref.slice(8)], depth + 1, root);
  if ("default" in schema) return schema.default;
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const k of ["oneOf", "anyOf", "allOf"]) {
    if (Array.isArray(schema[k]) && schema[k].length > 0) {
      const pick = schema[k].find((s) => typeOf(s) !== "null") || schema[k][0];
      return skeleton(pick, depth + 1, root);
    }
  }
  switch (typeOf(schema)) {
    case "object": {
      const out = {};
      const required = Array.isArray(schema.required) ? schema.required : null;
      for (const [name, prop] of Object.entries(schema.properties || {})) {
        const optional = required !== null && !required.includes(name);
        const types = prop && Array.isArray(prop.type) ? prop.type : [];
        out[name] = optional && types.includes("null") ? null : skeleton(prop, depth + 1, root);
      }
      return out;
    }
    case "array": return [];
    case "string": return "";
    case "integer": case "number": return 0;
    case "boolean": return false;
    case "null": return null;
    default: return {};
  }
}

// check returns what is wrong with value v under schema (empty when it
// fits): the subset of JSON Schema the runtime's answer schemas use.
function check(schema, v, root = schema, path = "answer", depth = 0) {
  schema = deref(schema, root);
  if (!schema || typeof schema !== "object" || depth > 32) return [];
  const out = [];
  for (const k of ["anyOf", "oneOf"]) {
    if (Array.isArray(schema[k]) && !schema[k].some((s) => check(s, v, root, path, depth + 1).length === 0)) {
      out.push(path + " fits none of the allowed forms");
    }
  }
  if ("const" in schema && JSON.stringify(schema.const) !== JSON.stringify(v)) out.push(path + " must be " + JSON.stringify(schema.const));
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(v))) {
    out.push(path + " must be one of " + schema.enum.map((e) => JSON.stringify(e)).join(", "));
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    const is = (t) => {
      switch (t) {
        case "null": return v === null;
        case "boolean": return typeof v === "boolean";
        case "string": return typeof v === "string";
        case "number": return typeof v === "number" && isFinite(v);
        case "integer": return typeof v === "number" && Number.isInteger(v);
        case "array": return Array.isArray(v);
        case "object": return v !== null && typeof v === "object" && !Array.isArray(v);
      }
      return true;
    };
    if (!types.some(is)) {
      out.push(path + " must be " + types.map((t) => (t === "integer" ? "a whole number" : t === "null" ? "empty" : t === "object" ? "an object" : t === "array" ? "a list" : "a " + t)).join(" or "));
      return out;
    }
  }
  if (typeof v === "number") {
    if (typeof schema.minimum === "number" && v < schema.minimum) out.push(path + " must be at least " + schema.minimum);
    if (typeof schema.maximum === "number" && v > schema.maximum) out.push(path + " must be at most " + schema.maximum);
  }
  if (Array.isArray(v) && schema.items) v.forEach((x, i) => out.push(...check(schema.items, x, root, path + "[" + i + "]", depth + 1)));
  if (v !== null && typeof v === "object" && !Array.isArray(v)) {
    const props = schema.properties || {};
    for (const r of schema.required || []) if (!(r in v)) out.push(path + "." + r + " is required");
    for (const [k, x] of Object.entries(v)) {
      if (k in props) out.push(...check(props[k], x, root, path + "." + k, depth + 1));
      else if (schema.additionalProperties === false) out.push(path + "." + k + " is not a member of the answer");
      else if (schema.additionalProperties && typeof schema.additionalProperties === "object") out.push(...check(schema.additionalProperties, x, root, path + "." + k, depth + 1));
    }
  }
  return out;
}

// fieldFor builds one labelled input for a scalar schema: its title (or
// name) as the label, its description as the hint.
function fieldFor(formID, name, schema, required) {
  const wrap = el("div", { class: "field" });
  const t = typeOf(schema);
  const id = formID + "-" + name;
  let input;
  if (Array.isArray(schema.enum)) {
    input = el("select");
    for (const v of schema.enum) input.append(el("option", { value: JSON.stringify(v), text: String(v) }));
    input.dataset.kind = "enum";
  } else {
    input = el("input", { type: t === "boolean" ? "checkbox" : t === "string" ? "text" : "number" });
    if (t === "integer") input.step = "1";
    if (t === "number") input.step = "any";
    input.dataset.kind = t;
  }
  input.name = name;
  input.id = id;
  const label = el("label", { htmlFor: id, text: (schema.title || name) + (required && t !== "boolean" ? " (required)" : "") });
  if (t === "boolean") wrap.append(input, " ", label);
  else wrap.append(label, input);
  if (schema.description) {
    const hint = el("small", { class: "hint", id: id + "-hint", text: schema.description });
    input.setAttribute("aria-describedby", hint.id);
    wrap.append(hint);
  }
  return wrap;
}

function readField(input) {
  switch (input.dataset.kind) {
    case "boolean": return input.checked;
    case "enum": return JSON.parse(input.value);
    case "integer": return input.value === "" ? null : Number(input.value);
    case "number": return input.value === "" ? null : Number(input.value);
    default: return input.value;
  }
}

// payloadView shows an interrupt's payload as text: a string as a
// paragraph, an object as labelled lines, anything nested as wrapped JSON.
function payloadView(payload) {
  if (typeof payload === "string") return el("p", { class: "question-text", text: payload });
  if (payload && typeof payload === "object" && !Array.isArray(payload)) {
    const dl = el("dl", { class: "payload" });
    for (const [k, v] of Object.entries(payload)) {
      dl.append(el("dt", { text: k }), el("dd", {}, typeof v === "string" ? v : el("pre", { text: pretty(v) })));
    }
    return dl;
  }
  return el("pre", { text: pretty(payload) });
}

// formFor builds the answer form of one interrupt p of thread threadID,
// asked at checkpoint checkpointID: the answer is sent for that checkpoint
// only, so that a second click, or a question asked again since, is not
// answered twice (409 thread-moved).
function formFor(threadID, p, checkpointID) {
  const formID = "answer-" + (p.id || "x").replace(/[^A-Za-z0-9_-]/g, "_");
  const form = el("form", { class: "answer", id: formID, noValidate: true });
  const schema = (p.expects && p.expects.schema) || {};
  const root = deref(schema, schema);
  const t = typeOf(root);
  let read;
  if (t === "object" && root.properties && Object.values(root.properties).every((s) => scalar(typeOf(deref(s, schema))))) {
    const names = Object.keys(root.properties);
    const req = root.required || [];
    for (const n of names) form.append(fieldFor(formID, n, deref(root.properties[n], schema), req.includes(n)));
    read = () => {
      const out = {};
      for (const n of names) {
        const v = readField(form.elements[n]);
        if (v === "" && !req.includes(n)) continue;
        out[n] = v;
      }
      return out;
    };
  } else if (scalar(t)) {
    form.append(fieldFor(formID, "answer", Object.assign({ title: "Answer" }, root), true));
    read = () => readField(form.elements.answer);
  } else {
    const area = el("textarea", { name: "answer", id: formID + "-json", spellcheck: false });
    area.value = pretty(skeleton(schema));
    form.append(el("label", { htmlFor: area.id, text: "Answer (JSON" + (p.expects ? ", " + p.expects.type : "") + ")" }), area);
    read = () => JSON.parse(area.value);
  }
  const submit = el("button", { type: "submit", text: "Answer" });
  const msg = el("div", { class: "error", role: "alert" });
  msg.setAttribute("role", "alert");
  form.append(msg, submit);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    msg.replaceChildren();
    let answer;
    try {
      answer = read();
    } catch (err) {
      msg.textContent = "The answer is not JSON: " + err.message;
      return;
    }
    const wrong = p.expects ? check(schema, answer) : [];
    if (wrong.length) {
      msg.append(el("p", { text: "The answer does not fit what the question expects:" }), el("ul", {}, ...wrong.map((w) => el("li", { text: w }))));
      return;
    }
    submit.disabled = true;
    try {
      const run = await call("POST", "/threads/" + enc(threadID) + "/resume", { answers: { [p.id]: answer }, expected_checkpoint_id: checkpointID });
      answered = { run: run.run_id, what: "Answer sent" };
      notice("Answer sent. Run " + run.run_id + " goes on…");
      if (view && view.thread === threadID) {
        view.run = run.run_id;
        follow(threadID, run.run_id);
      }
      form.closest(".question")?.classList.add("answered");
      await refreshThread();
    } catch (err) {
      msg.textContent = err.message;
      submit.disabled = false;
    }
  });
  return form;
}

// ---- confirmation ----

function confirmFirst(text, label) {
  return new Promise((resolve) => {
    const box = $("confirm");
    $("confirm-text").textContent = text;
    $("confirm-yes").textContent = label;
    box.hidden = false;
    $("confirm-yes").focus();
    const done = (ok) => {
      box.hidden = true;
      $("confirm-yes").onclick = $("confirm-no").onclick = null;
      resolve(ok);
    };
    $("confirm-yes").onclick = () => done(true);
    $("confirm-no").onclick = () => done(false);
  });
}

function notice(text) {
  $("notice").textContent = text;
  $("notice").hidden = !text;
}

// ---- the list ----

function listQuery() {
  const f = $("filters");
  const q = new URLSearchParams();
  q.set("limit", String(PAGE));
  const status = f.elements.status.value;
  if (status) q.set("status", status);
  const s = f.elements.q.value.trim();
  if (s) q.set("q", s);
  return q;
}

async function loadList(more) {
  const q = listQuery();
  if (more && listCursor) q.set("cursor", listCursor);
  let page;
  try {
    page = await call("GET", "/threads?" + q);
    $("list-error").hidden = true;
  } catch (err) {
    $("list-error").textContent = "Could not list the threads: " + err.message;
    $("list-error").hidden = false;
    return;
  }
  const ul = $("threads");
  const rows = page.threads.map((th) => {
    const meta = Object.entries(th.metadata || {}).filter(([k]) => k !== "owner").map(([k, v]) => k + "=" + v).join(" ");
    const a = el("a", { href: "?thread=" + enc(th.thread_id), class: "row" },
      statusBadge(th.status),
      el("span", { class: "graph", text: th.graph }),
      el("code", { class: "tid", text: th.thread_id }),
      th.pending.length ? el("span", { class: "ask", text: th.pending.length + (th.pending.length === 1 ? " question" : " questions") +
        " from " + [...new Set(th.pending.map(where))].join(", ") }) : null,
      meta ? el("span", { class: "meta", text: meta }) : null,
      el("span", { class: "when", text: "step " + th.step + " · created " + time(th.created) }));
    return el("li", { "data-thread": th.thread_id, "data-status": th.status }, a);
  });
  if (more) ul.append(...rows);
  else ul.replaceChildren(...rows);
  listCursor = page.next_cursor || "";
  $("more").hidden = !listCursor;
  $("list-empty").hidden = ul.children.length > 0;
}

// ---- the thread page ----

// branch is the chain of checkpoints from the oldest to cp (by parents).
function branch(cpID) {
  const byID = new Map(cps.map((c) => [c.checkpoint_id, c]));
  const out = [];
  for (let c = byID.get(cpID); c && out.length <= cps.length; c = byID.get(c.parent_id)) out.unshift(c);
  return out;
}

function selected() {
  const id = (view && view.cp) || (thread && thread.checkpoint_id);
  return cps.find((c) => c.checkpoint_id === id) || null;
}

async function refreshThread() {
  if (!view) return;
  const want = view.thread;
  const id = enc(want);
  let th, hist, rl;
  try {
    [th, hist, rl] = await Promise.all([
      call("GET", "/threads/" + id),
      call("GET", "/threads/" + id + "/history?limit=200"),
      call("GET", "/threads/" + id + "/runs"),
    ]);
    $("thread-error").hidden = true;
  } catch (err) {
    if (!view || view.thread !== want) return;
    const status = err.problem && err.problem.status;
    if (status === 404 || status === 400) {
      // No such thread, or one the principal may not see (the server
      // answers 404 for both): say so, and offer nothing to do with it.
      showMissing(view.thread);
      return;
    }
    $("thread-error").textContent = "Could not read the thread: " + err.message + (thread ? "" : ". Reload the page to try again.");
    $("thread-error").hidden = false;
    return;
  }
  if (!view || view.thread !== th.thread_id) return;
  $("thread-missing").hidden = true;
  $("thread-body").hidden = false;
  thread = th;
  cps = hist.checkpoints;
  runs = rl.runs;
  $("thread-status").replaceChildren(statusBadge(th.status));
  $("thread-graph").textContent = "graph " + th.graph + " · step " + th.step;
  $("thread-meta").textContent = Object.entries(th.metadata || {}).map(([k, v]) => k + "=" + v).join(" ");
  const active = runs.find((r) => r.status === "new" || r.status === "running");
  $("cancel-run").hidden = !active;
  $("cancel-run").dataset.run = active ? active.run_id : "";
  drawQuestions(th);
  drawSubgraphs(th);
  drawRuns();
  if (!view.run && runs.length) {
    view.run = runs[0].run_id;
  }
  if (view.run && sourceRun !== view.run) follow(th.thread_id, view.run);
  const cp = selected();
  const key = [th.status, th.checkpoint_id, cp ? cp.checkpoint_id : "", cps.length].join("|");
  if (key !== lastKey) {
    lastKey = key;
    drawTimeline(cp);
    drawValues(cp);
    drawFork(cp);
    await drawDiagram(cp);
  }
  if (answered) {
    const r = runs.find((x) => x.run_id === answered.run);
    if (r && r.ended) {
      notice(answered.what + ". Run " + r.run_id + " ended " + (statusWords[r.status] || r.status) + (r.error ? ": " + r.error : "") +
        ". Channels now: " + JSON.stringify(th.values || {}));
      answered = null;
    }
  }
  // How many refreshes the page has drawn: what a watcher (the browser
  // test) waits on instead of the clock.
  $("thread").dataset.refreshes = String(Number($("thread").dataset.refreshes || 0) + 1);
}

// resetThread empties the thread page of what it showed of a thread:
// its state, actions, questions, timeline, runs, diagram and events.
function resetThread() {
  thread = null;
  cps = [];
  runs = [];
  lastKey = "";
  $("thread-body").hidden = true;
  $("thread-missing").hidden = true;
  $("thread-error").hidden = true;
  $("confirm").hidden = true;
  $("thread-status").replaceChildren();
  $("thread-graph").textContent = "";
  $("thread-meta").textContent = "";
  $("cancel-run").hidden = true;
  $("question-list").replaceChildren();
  $("timeline").replaceChildren();
  $("runs").replaceChildren();
  runsKey = "";
  $("values").textContent = "";
  $("diagram").replaceChildren();
  $("mermaid").textContent = "";
  $("fork").hidden = true;
  if (source) source.close();
  source = null;
  sourceRun = null;
  $("events").replaceChildren();
  $("events-run").textContent = "";
  subgraphsKey = "";
  $("subgraph-list").replaceChildren();
  $("subgraphs").hidden = true;
}

// showMissing turns the thread page into a plain statement that thread
// id is not there for this principal (it does not exist, was deleted, or
// belongs to someone else), with no action on it.
function showMissing(id) {
  resetThread();
  $("thread-missing").textContent = "No thread " + id + ": it does not exist (or was deleted), or you may not see it. Go back to all threads to find the one you want.";
  $("thread-missing").hidden = false;
  document.title = "No thread " + id + " · ilmek";
}

// drawQuestions updates the question cards in place: a card of an
// interrupt still open is left as it is (what is typed stays), a new one
// is added, one answered is removed.
function drawQuestions(th) {
  const box = $("question-list");
  const open = new Set(th.pending.map((p) => p.id));
  for (const card of [...box.children]) {
    if (!open.has(card.dataset.id)) card.remove();
  }
  for (const p of th.pending) {
    if ([...box.children].some((c) => c.dataset.id === p.id)) continue;
    const card = el("article", { class: "question", "data-id": p.id, "data-where": where(p) },
      el("h4", { text: "Question from " + where(p) + (p.path && p.path.length ? " (inside a subgraph)" : "") }),
      payloadView(p.payload),
      formFor(th.thread_id, p, th.checkpoint_id));
    box.append(card);
  }
  $("questions-empty").hidden = th.pending.length > 0;
}

let subgraphsKey = "";

// drawSubgraphs lists where each child run inside the thread's tasks
// stands (its step, the nodes it runs next, the questions it waits on and
// its channels), when it changed.
function drawSubgraphs(th) {
  const subs = th.subgraphs || [];
  const key = JSON.stringify(subs.map((c) => [c.path, c.checkpoint_id]));
  if (key === subgraphsKey) return;
  subgraphsKey = key;
  $("subgraphs").hidden = subs.length === 0;
  $("subgraph-list").replaceChildren(...subs.map((c) => {
    const facts = ["step " + c.step];
    if (c.next.length) facts.push("next " + c.next.join(", "));
    if (c.pending.length) facts.push(c.pending.length + (c.pending.length === 1 ? " question" : " questions"));
    return el("li", { "data-path": c.path.join("/") },
      el("strong", { text: c.path.join(" › ") }), " ", el("span", { class: "facts", text: facts.join(" · ") }),
      el("details", {}, el("summary", { text: "channels" }), el("pre", { text: pretty(c.values || {}) })));
  }));
}

let runsKey = "";

// drawRuns redraws the runs when they changed (so that focus stays put).
function drawRuns() {
  const key = JSON.stringify([view && view.run, runs.map((r) => [r.run_id, r.status, r.ended])]);
  if (key === runsKey) return;
  runsKey = key;
  const ul = $("runs");
  ul.replaceChildren(...runs.map((r) => {
    const dur = r.ended ? " · " + ms(new Date(r.ended) - new Date(r.created)) : "";
    const b = el("button", { type: "button", class: "linkish" + (r.run_id === (view && view.run) ? " current" : "") },
      statusBadge(r.status, true), " " + r.kind + " ", el("code", { text: r.run_id }), " " + time(r.created) + dur);
    b.addEventListener("click", () => {
      view.run = r.run_id;
      follow(view.thread, r.run_id);
      drawRuns();
    });
    return el("li", {}, b, r.error ? el("p", { class: "error", text: r.error }) : null);
  }));
}

function drawTimeline(cp) {
  const latest = thread && thread.checkpoint_id;
  const chain = latest ? branch(latest) : [];
  const chosen = cp ? branch(cp.checkpoint_id) : chain;
  // The branch shown is the chosen checkpoint's; after it, the latest's.
  const shown = chain.some((c) => cp && c.checkpoint_id === cp.checkpoint_id) ? chain : chosen;
  const ol = $("timeline");
  ol.replaceChildren(...shown.map((c) => {
    const head = el("a", { href: "?thread=" + enc(view.thread) + "&cp=" + enc(c.checkpoint_id), class: "step" + (cp && c.checkpoint_id === cp.checkpoint_id ? " current" : "") },
      "Step " + c.step + (c.nodes.length ? ": " + c.nodes.join(", ") : c.pending.length ? ": question from " + c.pending.map((p) => p.node).join(", ") : c.parent_id ? "" : ": input"));
    if (cp && c.checkpoint_id === cp.checkpoint_id) head.setAttribute("aria-current", "step");
    const facts = [];
    facts.push(c.started ? "started " + clock(c.started) : "at " + clock(c.created));
    const parent = cps.find((x) => x.checkpoint_id === c.parent_id);
    if (c.duration_ms !== undefined) facts.push((parent && parent.pending.length ? "answered and ran " : "took ") + ms(c.duration_ms) + (parent && parent.pending.length ? " after the question" : ""));
    if (c.writes.length) facts.push("wrote " + c.writes.join(", "));
    if (c.pending.length) facts.push("asked " + c.pending.map((p) => p.node).join(", "));
    if (c.next.length) facts.push("next " + c.next.join(", "));
    return el("li", { "data-cp": c.checkpoint_id }, head, el("span", { class: "facts", text: facts.join(" · ") }));
  }));
  const failed = runs.find((r) => r.status === "error");
  if (failed && runs[0] === failed) ol.append(el("li", { class: "failed" }, el("span", { class: "step", text: "Failed" }), el("span", { class: "facts", text: failed.error || "the run failed" })));
}

function drawValues(cp) {
  const latest = !view.cp || (thread && view.cp === thread.checkpoint_id);
  $("values-at").textContent = cp ? (latest ? "latest, step " + cp.step : "at step " + cp.step + " (an earlier checkpoint)") : "";
  $("values").textContent = cp ? pretty(cp.values) : "The thread has not run yet.";
}

function drawFork(cp) {
  const sec = $("fork");
  sec.hidden = !cp;
  if (!cp) return;
  $("fork-step").textContent = String(cp.step);
  $("fork-error").textContent = "";
  const area = $("fork-body");
  if (cp.pending.length) {
    $("fork-hint").textContent = "The thread asked here. Edit the answer; the fork runs on from this question with it (steps journaled before the question are not run again).";
    $("fork-label").textContent = "Answers by question (JSON)";
    area.value = pretty(Object.fromEntries(cp.pending.map((p) => [p.id, skeleton(p.expects && p.expects.schema)])));
    area.dataset.mode = "answers";
  } else {
    $("fork-hint").textContent = "Edit the channel values; the fork folds them in and runs on from this checkpoint.";
    $("fork-label").textContent = "Channel values to fold in (JSON)";
    area.value = pretty(cp.values || {});
    area.dataset.mode = "input";
  }
  sec.dataset.cp = cp.checkpoint_id;
}

async function drawDiagram(cp) {
  const id = enc(view.thread);
  const at = cp && thread && cp.checkpoint_id !== thread.checkpoint_id ? "&checkpoint=" + enc(cp.checkpoint_id) : "";
  let svg, mmd;
  try {
    [svg, mmd] = await Promise.all([
      call("GET", "/threads/" + id + "/diagram?format=svg&subgraphs=expand" + at).catch((err) => {
        if (err.problem && err.problem.status === 501) return null;
        throw err;
      }),
      call("GET", "/threads/" + id + "/diagram?format=mermaid&subgraphs=expand" + at),
    ]);
  } catch (err) {
    $("diagram").textContent = "Could not draw the graph: " + err.message;
    return;
  }
  if (svg === null) {
    $("diagram").replaceChildren(el("pre", { class: "mermaid-fallback", text: mmd }));
  } else {
    const doc = new DOMParser().parseFromString(svg, "image/svg+xml");
    const root = doc.documentElement;
    if (root && root.nodeName === "svg") $("diagram").replaceChildren(document.importNode(root, true));
  }
  $("mermaid").textContent = mmd;
  // The path taken: the nodes of every superstep up to the chosen
  // checkpoint, and the start.
  const path = new Set(["__start__"]);
  for (const c of cp ? branch(cp.checkpoint_id) : []) for (const n of c.nodes) path.add(n);
  if (thread && thread.status === "done" && (!view.cp || view.cp === thread.checkpoint_id)) path.add("__end__");
  for (const g of $("diagram").querySelectorAll("svg g.node, svg g.cluster")) {
    if (path.has(g.id.replace(/^node_/, ""))) g.classList.add("visited");
  }
}

// follow shows runID's events, live over SSE until its run_end.
function follow(threadID, runID) {
  if (source) source.close();
  source = null;
  sourceRun = runID;
  $("events").replaceChildren();
  $("events-run").textContent = runID ? "of run " + runID : "";
  if (!runID) return;
  const es = new EventSource(api + "/threads/" + enc(threadID) + "/runs/" + enc(runID) + "/stream");
  source = es;
  const onEvent = (e) => {
    if (source !== es) return;
    const ev = JSON.parse(e.data);
    const bits = [ev.type];
    if (ev.step) bits.push("step " + ev.step);
    if (ev.node) bits.push(ev.node);
    if (ev.ns && ev.ns.length) bits.push("in " + ev.ns.join(" › "));
    if (ev.status) bits.push(ev.status);
    if (ev.duration_ns) bits.push(ms(ev.duration_ns / 1e6));
    const li = el("li", { class: "ev-" + ev.type }, el("time", { dateTime: ev.time, text: clock(ev.time) }), " #" + ev.seq + " " + bits.join(" "));
    if (ev.error) li.append(el("span", { class: "error", text: ": " + ev.error }));
    const payload = ev.payload !== undefined ? ev.payload : ev.update !== undefined ? ev.update : ev.pending !== undefined ? ev.pending : ev.tasks;
    if (payload !== undefined) li.append(el("details", {}, el("summary", { text: ev.type === "custom" ? "payload" : ev.type === "node_end" ? "update" : "details" }), el("pre", { text: pretty(payload) })));
    $("events").append(li);
    if (ev.type === "run_end") {
      es.close();
      source = null;
      refreshThread();
    } else if (ev.type === "checkpoint" || ev.type === "interrupt") {
      refreshThread();
    }
  };
  for (const t of ["run_start", "step_start", "node_start", "custom", "node_retry", "node_end", "node_error", "state", "checkpoint", "interrupt", "run_end"]) {
    es.addEventListener(t, onEvent);
  }
}

// ---- routing ----

function route() {
  const q = new URLSearchParams(location.search);
  const id = q.get("thread");
  if (id) {
    const same = view && view.thread === id;
    const run = q.get("run") || (same ? view.run : null);
    view = { thread: id, cp: q.get("cp"), run };
    $("list").hidden = true;
    $("thread").hidden = false;
    $("thread-id").textContent = id;
    document.title = "Thread " + id + " · ilmek";
    if (!same) {
      resetThread();
      if (!answered) notice("");
    }
    refreshThread();
  } else {
    view = null;
    if (source) source.close();
    source = null;
    sourceRun = null;
    $("thread").hidden = true;
    $("list").hidden = false;
    document.title = "Console · ilmek";
    const f = $("filters");
    const status = q.get("status") || "";
    for (const r of f.elements.status) r.checked = r.value === status;
    f.elements.q.value = q.get("q") || "";
    loadList(false);
  }
}

function go(href) {
  window.history.pushState(null, "", href);
  route();
  window.scrollTo(0, 0);
}

document.addEventListener("click", (e) => {
  const a = e.target.closest("a[href]");
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const u = new URL(a.href, location.href);
  if (u.origin !== location.origin || u.pathname !== location.pathname) return;
  e.preventDefault();
  go(u.pathname + u.search);
});
window.addEventListener("popstate", route);

function listHref() {
  const q = listQuery();
  q.delete("limit");
  return "./" + (String(q) ? "?" + q : "");
}

$("filters").addEventListener("change", () => window.history.replaceState(null, "", listHref()) || loadList(false));
$("search").addEventListener("input", () => window.history.replaceState(null, "", listHref()) || loadList(false));
$("filters").addEventListener("submit", (e) => e.preventDefault());
$("more").addEventListener("click", () => loadList(true));

$("delete-thread").addEventListener("click", async () => {
  const id = view.thread;
  if (!(await confirmFirst("Delete thread " + id + "? Its checkpoints, questions and events are removed for good.", "Delete thread"))) return;
  try {
    await call("DELETE", "/threads/" + enc(id));
    go("./");
    $("list-error").hidden = true;
  } catch (err) {
    $("thread-error").textContent = "Could not delete the thread: " + err.message;
    $("thread-error").hidden = false;
  }
});

$("cancel-run").addEventListener("click", async () => {
  const run = $("cancel-run").dataset.run;
  if (!run || !(await confirmFirst("Cancel run " + run + "? It stops at its next superstep boundary.", "Cancel the run"))) return;
  try {
    await call("POST", "/threads/" + enc(view.thread) + "/runs/" + enc(run) + "/cancel");
    notice("Run " + run + " was asked to stop.");
    refreshThread();
  } catch (err) {
    $("thread-error").textContent = "Could not cancel the run: " + err.message;
    $("thread-error").hidden = false;
  }
});

$("fork-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const cp = $("fork").dataset.cp;
  const area = $("fork-body");
  let body;
  try {
    body = JSON.parse(area.value);
  } catch (err) {
    $("fork-error").textContent = "Not JSON: " + err.message;
    return;
  }
  const c = cps.find((x) => x.checkpoint_id === cp);
  if (area.dataset.mode === "answers" && c) {
    const wrong = [];
    for (const p of c.pending) if (p.expects && p.id in body) wrong.push(...check(p.expects.schema, body[p.id], p.expects.schema, p.id));
    if (wrong.length) {
      $("fork-error").textContent = wrong.join("; ");
      return;
    }
  }
  if (!(await confirmFirst("Fork thread " + view.thread + " from step " + (c ? c.step : "?") + "? The thread's latest state becomes the fork's.", "Fork"))) return;
  try {
    const run = await call("POST", "/threads/" + enc(view.thread) + "/history/" + enc(cp) + "/fork", area.dataset.mode === "answers" ? { answers: body } : { input: body });
    answered = { run: run.run_id, what: "Forked from step " + (c ? c.step : "?") };
    notice("Forked from step " + (c ? c.step : "?") + ". Run " + run.run_id + " goes on…");
    go("?thread=" + enc(view.thread) + "&run=" + enc(run.run_id));
  } catch (err) {
    $("fork-error").textContent = err.message;
  }
});

route();
setInterval(() => (view ? refreshThread() : $("threads").children.length <= PAGE && loadList(false)), REFRESH_MS);
