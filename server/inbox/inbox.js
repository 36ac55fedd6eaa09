// The inbox: threads waiting on a person, a form per open interrupt (its
// fields from the interrupt's JSON Schema when it is simple enough, else a
// JSON text area), and the chosen thread's diagram, Mermaid text and live
// event log. Plain DOM, no framework; every request goes to this server.
"use strict";

const api = new URL("..", document.baseURI).pathname.replace(/\/$/, "");
const $ = (id) => document.getElementById(id);
let current = null; // the shown thread's id
let source = null;  // the EventSource of the shown run

async function call(method, path, body) {
  const opts = { method, headers: {}, credentials: "same-origin" };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const res = await fetch(api + path, opts);
  const type = res.headers.get("Content-Type") || "";
  const data = type.includes("json") ? await res.json() : await res.text();
  if (!res.ok) {
    const err = new Error((data && data.detail) || (data && data.title) || res.statusText);
    err.problem = data;
    throw err;
  }
  return data;
}

function typeOf(schema) {
  if (!schema || typeof schema !== "object") return null;
  const t = schema.type;
  if (Array.isArray(t)) return t.find((x) => x !== "null") || null;
  return t || null;
}

const scalar = (t) => t === "boolean" || t === "string" || t === "integer" || t === "number";

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

// fieldFor builds one labelled input for a scalar schema.
function fieldFor(name, label, schema) {
  const wrap = document.createElement("label");
  const t = typeOf(schema);
  let input;
  if (Array.isArray(schema.enum)) {
    input = document.createElement("select");
    for (const v of schema.enum) {
      const o = document.createElement("option");
      o.value = JSON.stringify(v);
      o.textContent = String(v);
      input.append(o);
    }
    input.dataset.kind = "enum";
  } else {
    input = document.createElement("input");
    input.type = t === "boolean" ? "checkbox" : t === "string" ? "text" : "number";
    if (t === "integer") input.step = "1";
    if (t === "number") input.step = "any";
    input.dataset.kind = t;
  }
  input.name = name;
  if (t === "boolean") {
    wrap.append(input, " " + label);
  } else {
    wrap.append(label + " ", input);
  }
  return wrap;
}

function readField(input) {
  switch (input.dataset.kind) {
    case "boolean": return input.checked;
    case "enum": return JSON.parse(input.value);
    case "integer": return input.value === "" ? null : parseInt(input.value, 10);
    case "number": return input.value === "" ? null : Number(input.value);
    default: return input.value;
  }
}

// formFor builds the answer form of one interrupt.
function formFor(threadID, p) {
  const form = document.createElement("form");
  form.className = "answer";
  const schema = p.expects && p.expects.schema;
  const t = typeOf(schema);
  let read;
  if (t === "object" && schema.properties && Object.values(schema.properties).every((s) => scalar(typeOf(s)))) {
    const names = Object.keys(schema.properties);
    for (const n of names) form.append(fieldFor(n, n, schema.properties[n]));
    read = () => Object.fromEntries(names.map((n) => [n, readField(form.elements[n])]));
  } else if (scalar(t)) {
    form.append(fieldFor("answer", "Answer", schema));
    read = () => readField(form.elements.answer);
  } else {
    const label = document.createElement("label");
    const area = document.createElement("textarea");
    area.name = "answer";
    area.value = JSON.stringify(skeleton(schema), null, 2);
    label.append("Answer (JSON" + (p.expects ? ", " + p.expects.type : "") + ")", area);
    form.append(label);
    read = () => JSON.parse(area.value);
  }
  const submit = document.createElement("button");
  submit.type = "submit";
  submit.textContent = "Answer";
  const msg = document.createElement("p");
  msg.className = "error";
  msg.setAttribute("role", "alert");
  form.append(submit, msg);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    msg.textContent = "";
    let answer;
    try {
      answer = read();
    } catch (err) {
      msg.textContent = "The answer is not JSON: " + err.message;
      return;
    }
    submit.disabled = true;
    try {
      const run = await call("POST", "/threads/" + encodeURIComponent(threadID) + "/resume", { answers: { [p.id]: answer } });
      await show(threadID, run.run_id);
      await refreshWaiting();
    } catch (err) {
      msg.textContent = err.message;
      submit.disabled = false;
    }
  });
  return form;
}

async function refreshWaiting() {
  let list;
  try {
    list = await call("GET", "/threads?pending=true");
    $("waiting-error").hidden = true;
  } catch (err) {
    $("waiting-error").textContent = "Could not list the threads: " + err.message;
    $("waiting-error").hidden = false;
    return;
  }
  const ul = $("waiting-list");
  ul.replaceChildren();
  for (const th of list.threads) {
    const li = $("card").content.firstElementChild.cloneNode(true);
    li.dataset.thread = th.thread_id;
    li.querySelector(".graph").textContent = th.graph;
    li.querySelector(".tid").textContent = th.thread_id;
    li.querySelector(".show").addEventListener("click", () => show(th.thread_id, th.last_run_id));
    const box = li.querySelector(".interrupts");
    for (const p of th.pending) {
      const div = document.createElement("div");
      div.className = "interrupt";
      const h = document.createElement("h4");
      h.textContent = "Interrupt " + p.id + " (node " + p.node + ")";
      const pre = document.createElement("pre");
      pre.textContent = JSON.stringify(p.payload, null, 2);
      div.append(h, pre, formFor(th.thread_id, p));
      box.append(div);
    }
    ul.append(li);
  }
  $("waiting-empty").hidden = list.threads.length > 0;
  if (current === null && list.threads.length > 0) {
    await show(list.threads[0].thread_id, list.threads[0].last_run_id);
  }
}

// refreshThread redraws the shown thread's status, diagram and Mermaid
// text. A server without an SVG renderer answers the SVG 501: the Mermaid
// text then takes the diagram's place.
async function refreshThread() {
  if (current === null) return;
  const id = encodeURIComponent(current);
  const [th, svg, mmd] = await Promise.all([
    call("GET", "/threads/" + id),
    call("GET", "/threads/" + id + "/diagram?format=svg").catch((err) => {
      if (err.problem && err.problem.status === 501) return null;
      throw err;
    }),
    call("GET", "/threads/" + id + "/diagram?format=mermaid"),
  ]);
  $("thread-status").textContent = th.status + (th.pending.length ? " (" + th.pending.length + " open)" : "");
  if (svg === null) {
    const pre = document.createElement("pre");
    pre.className = "mermaid-fallback";
    pre.textContent = mmd;
    $("diagram").replaceChildren(pre);
  } else {
    const doc = new DOMParser().parseFromString(svg, "image/svg+xml");
    const el = doc.documentElement;
    if (el && el.nodeName === "svg") $("diagram").replaceChildren(document.importNode(el, true));
  }
  $("mermaid").textContent = mmd;
}

// show makes threadID the shown thread and follows runID's events.
async function show(threadID, runID) {
  current = threadID;
  $("thread").hidden = false;
  $("thread-id").textContent = threadID;
  await refreshThread();
  if (source) source.close();
  source = null;
  $("events").replaceChildren();
  $("events-run").textContent = runID ? "of run " + runID : "";
  if (!runID) return;
  const es = new EventSource(api + "/threads/" + encodeURIComponent(threadID) + "/runs/" + encodeURIComponent(runID) + "/stream");
  source = es;
  const onEvent = (e) => {
    const ev = JSON.parse(e.data);
    const li = document.createElement("li");
    li.textContent = ev.seq + " " + ev.type + (ev.node ? " " + ev.node : "") + (ev.status ? " " + ev.status : "") + (ev.error ? ": " + ev.error : "");
    $("events").append(li);
    if (ev.type === "run_end") {
      es.close();
      if (source === es) source = null;
      refreshThread();
    } else if (ev.type === "checkpoint" || ev.type === "interrupt") {
      refreshThread();
    }
  };
  for (const t of ["run_start", "step_start", "node_start", "custom", "node_retry", "node_end", "node_error", "state", "checkpoint", "interrupt", "run_end"]) {
    es.addEventListener(t, onEvent);
  }
}

refreshWaiting();
setInterval(refreshWaiting, 5000);
