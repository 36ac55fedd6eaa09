import { StrictMode, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { ReactFlow, ReactFlowProvider, Background, Controls, Handle, Position, MarkerType, useReactFlow, applyNodeChanges } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import './studio.css';
import { api, Problem } from './api.js';
import { ConfigForm, GuardForm, TextInput } from './forms.jsx';
import { isRaw, parseJSON, syntaxMessage } from './json.js';
import { isObject, problemHint, problemLine, shapeProblems } from './shape.js';
import { SubgraphForm } from './subgraph.jsx';

const START = '__start__';
const END = '__end__';
const SUBGRAPH = 'subgraph';

// subgraphOf is the graph a subgraph node's config names ('' if none).
function subgraphOf(n) {
  return n && n.type === SUBGRAPH && n.config && typeof n.config.graph === 'string' ? n.config.graph : '';
}
const REDUCERS = ['last_write', 'append', 'merge'];

// studioOf is an "x-studio" member that is an object, else {} (an "x-"
// member may hold anything: the document checker does not read it).
const studioOf = (m) => (isObject(m) ? m : {});

// point reads a position of an "x-studio" member: numbers x and y, else
// null.
function point(m) {
  const num = (v) => (isRaw(v) ? Number(v.rawJSON) : v);
  const p = isObject(m) ? { x: num(m.x), y: num(m.y) } : {};
  return Number.isFinite(p.x) && Number.isFinite(p.y) ? p : null;
}

// pos reads a canvas position: only "x-studio" members hold them, which
// the fingerprint leaves out. One that is not a position is left out.
function posOf(doc, id, i, n) {
  if (id === START || id === END) {
    const p = point(studioOf(doc['x-studio'])[id === START ? 'start' : 'end']);
    return p || { x: 250, y: id === START ? 0 : 120 * (n + 1) };
  }
  return point(doc.nodes[i]['x-studio']) || { x: 250, y: 120 * (i + 1) };
}

function withPos(doc, id, p) {
  const q = { x: Math.round(p.x), y: Math.round(p.y) };
  if (id === START || id === END) {
    return { ...doc, 'x-studio': { ...studioOf(doc['x-studio']), [id === START ? 'start' : 'end']: q } };
  }
  return { ...doc, nodes: doc.nodes.map((n) => (n.id === id ? { ...n, 'x-studio': { ...studioOf(n['x-studio']), ...q } } : n)) };
}

function guardText(w) {
  if (!w) return '';
  const op = ['eq', 'neq', 'in', 'gt', 'lt', 'truthy'].find((o) => o in w);
  return w.channel + ' ' + op + ' ' + JSON.stringify(w[op]);
}

// GraphNode draws a node on the canvas. Its id and type are one line each,
// cut with an ellipsis at the node's widest (a long id never widens the
// node), each whole in its tooltip and in the inspector. Its first
// diagnostic is one line cut to the node's width (it never widens or
// lengthens the node over its neighbours); the tooltip holds every
// diagnostic of the node in full, and the inspector lists them when the
// node is selected.
function GraphNode({ data, selected }) {
  const cls = 'gnode' + (data.errors.length ? ' has-error' : data.warnings.length ? ' has-warning' : '') + (selected ? ' selected' : '') + (data.terminal ? ' terminal' : '');
  const all = [...data.errors, ...data.warnings];
  const first = all[0];
  const full = all.map((d) => d.severity + ': ' + d.message + (d.hint ? ' (' + d.hint + ')' : '')).join('\n');
  return (
    <div className={cls} data-node={data.id}>
      {data.id !== START ? <Handle type="target" position={Position.Top} /> : null}
      <div className="gnode-id" title={data.id}>{data.id}</div>
      {data.type ? <div className="gnode-type" title={data.type + (data.sub ? ' → ' + data.sub : '')}>{data.type}{data.sub ? ' → ' + data.sub : ''}</div> : null}
      {data.sub ? (
        <button type="button" className="nodrag gnode-open" aria-label={'open child graph ' + data.sub} onClick={(e) => { e.stopPropagation(); data.onOpen(); }}>open ↗</button>
      ) : null}
      {first ? (
        <div className={'gnode-diag ' + first.severity} role="alert" title={full + '\n(select the node to see the details in the inspector)'}>
          {all.length > 1 ? <span className="gnode-more" aria-label={all.length + ' problems'}>{all.length}×</span> : null}
          {first.message}
          {first.hint ? <em> {first.hint}</em> : null}
        </div>
      ) : null}
      {data.id !== END ? <Handle type="source" position={Position.Bottom} /> : null}
    </div>
  );
}
const nodeTypes = { g: GraphNode };

function Palette({ types, onAdd }) {
  const groups = {};
  for (const t of types) {
    const g = t.builtin ? 'built-in' : t.category || 'other';
    (groups[g] = groups[g] || []).push(t);
  }
  return (
    <aside className="palette" aria-label="Node types">
      <h2>Node types</h2>
      {Object.entries(groups).map(([g, ts]) => (
        <section key={g}>
          <h3>{g}</h3>
          {ts.map((t) => (
            <button key={t.type} type="button" className="palette-item" data-type={t.type} draggable
              title={t.description || t.type}
              onDragStart={(e) => {
                e.dataTransfer.setData('application/x-ilmek-type', t.type);
                e.dataTransfer.effectAllowed = 'move';
              }}
              onClick={() => onAdd(t.type)}>
              <strong>{t.type}</strong>
              {t.description ? <small>{t.description}</small> : null}
            </button>
          ))}
        </section>
      ))}
    </aside>
  );
}

function Diagnostics({ report, onPick }) {
  if (!report) return null;
  return (
    <section className="diagnostics" aria-label="Diagnostics">
      <h2>Checks {report.errors ? <span className="badge error">{report.errors} errors</span> : <span className="badge ok">no errors</span>}</h2>
      <ul>
        {report.diagnostics.map((d, i) => (
          <li key={i} className={'diag ' + d.severity}>
            <button type="button" onClick={() => onPick(d)}>
              <b>{d.severity}</b> {d.path ? <code>{d.path}</code> : null} {d.message}
              {d.hint ? <em> — {d.hint}</em> : null}
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

function Channels({ doc, edit }) {
  const chans = doc.channels || {};
  const [name, setName] = useState('');
  return (
    <div className="form" data-testid="channels">
      <h3>Channels</h3>
      {Object.entries(chans).map(([c, ch]) => (
        <div className="row" key={c}>
          <code>{c}</code>
          <select aria-label={'reducer of ' + c} value={ch.reducer || 'last_write'}
            onChange={(e) => edit((d) => ({ ...d, channels: { ...d.channels, [c]: e.target.value === 'last_write' ? omit(ch, 'reducer') : { ...ch, reducer: e.target.value } } }))}>
            {REDUCERS.map((r) => <option key={r} value={r}>{r}</option>)}
          </select>
          <button type="button" aria-label={'remove channel ' + c} onClick={() => edit((d) => ({ ...d, channels: omit(d.channels, c) }))}>×</button>
        </div>
      ))}
      <div className="row">
        <input id="channel-name" placeholder="new channel" value={name} onChange={(e) => setName(e.target.value)} />
        <button id="channel-add" type="button" disabled={!name || name in chans}
          onClick={() => { edit((d) => ({ ...d, channels: { ...(d.channels || {}), [name]: {} } })); setName(''); }}>Add channel</button>
      </div>
    </div>
  );
}

function omit(o, k) {
  const r = { ...o };
  delete r[k];
  return r;
}

function EdgeAdder({ doc, edit }) {
  const ids = doc.nodes.map((n) => n.id);
  const [from, setFrom] = useState(START);
  const [to, setTo] = useState(END);
  return (
    <div className="form" data-testid="edge-adder">
      <h3>Connect</h3>
      <div className="row">
        <select id="edge-from" aria-label="from" value={from} onChange={(e) => setFrom(e.target.value)}>
          {[START, ...ids].map((x) => <option key={x} value={x}>{x}</option>)}
        </select>
        →
        <select id="edge-to" aria-label="to" value={to} onChange={(e) => setTo(e.target.value)}>
          {[...ids, END].map((x) => <option key={x} value={x}>{x}</option>)}
        </select>
        <button id="edge-add" type="button" onClick={() => edit((d) => ({ ...d, edges: [...(d.edges || []), { from, to }] }))}>Add edge</button>
      </div>
    </div>
  );
}

function Inspector({ doc, sel, types, report, edit, setSel, kids, docs, onOpen, ro }) {
  const diags = (report ? report.diagnostics : []).filter((d) => (sel && sel.node && d.node === sel.node) || (sel && sel.edge !== undefined && d.edge === sel.edge));
  if (sel && sel.node && sel.node !== START && sel.node !== END) {
    const i = doc.nodes.findIndex((n) => n.id === sel.node);
    if (i < 0) return null;
    const n = doc.nodes[i];
    const t = types.find((x) => x.type === n.type);
    const set = (f) => edit((d) => ({ ...d, nodes: d.nodes.map((m, j) => (j === i ? f(m) : m)) }));
    const setConfig = (c) => set((m) => (c === undefined ? omit(m, 'config') : { ...m, config: c }));
    const isSub = n.type === SUBGRAPH && t && t.builtin;
    const g = subgraphOf(n);
    const child = kids.find((k) => k.graph === g);
    const draft = child ? child.document : (docs.find((d) => d.name === g) || {}).id;
    return (
      <aside className="inspector" aria-label="Inspector">
        <h2>Node <code>{n.id}</code> <small>{n.type}</small></h2>
        {t && t.description ? <p>{t.description}</p> : null}
        <DiagList diags={diags} />
        {isSub ? (
          <div className="row open-child">
            <button id="open-child" type="button" disabled={!child} onClick={() => onOpen({ published: child })}>Open {g || 'child'}{child ? ' v' + child.version : ''} (read-only)</button>
            <button id="open-child-draft" type="button" disabled={!draft} onClick={() => onOpen({ draft })}>Edit {g || 'child'}'s draft</button>
          </div>
        ) : null}
        <fieldset className="plain" disabled={ro}>
        {isSub ? (
          <SubgraphForm value={n.config} onChange={setConfig} kids={kids} channels={Object.keys(doc.channels || {})} />
        ) : (
          <ConfigForm schema={t && t.config_schema} value={n.config} onChange={setConfig} />
        )}
        <div className="field">
          <label htmlFor="node-goto">goto (node ids, comma-separated)</label>
          <TextInput id="node-goto" value={(n.goto || []).join(', ')}
            onCommit={(s) => set((m) => (s.trim() === '' ? omit(m, 'goto') : { ...m, goto: s.split(',').map((x) => x.trim()).filter(Boolean) }))} />
        </div>
        <button type="button" className="danger" onClick={() => { edit((d) => removeNode(d, n.id)); setSel(null); }}>Delete node</button>
        </fieldset>
      </aside>
    );
  }
  if (sel && sel.edge !== undefined && doc.edges[sel.edge]) {
    const e = doc.edges[sel.edge];
    return (
      <aside className="inspector" aria-label="Inspector">
        <h2>Edge <code>{e.from} → {e.to}</code></h2>
        <DiagList diags={diags} />
        <fieldset className="plain" disabled={ro}>
        <h3>Guard</h3>
        <GuardForm key={sel.edge} channels={Object.keys(doc.channels || {})} when={e.when}
          onChange={(w) => edit((d) => ({ ...d, edges: d.edges.map((x, j) => (j === sel.edge ? (w === undefined ? omit(x, 'when') : { ...x, when: w }) : x)) }))} />
        <button type="button" className="danger" onClick={() => { edit((d) => ({ ...d, edges: d.edges.filter((_, j) => j !== sel.edge) })); setSel(null); }}>Delete edge</button>
        </fieldset>
      </aside>
    );
  }
  return (
    <aside className="inspector" aria-label="Inspector">
      <h2>Graph <code>{doc.name}</code></h2>
      <fieldset className="plain" disabled={ro}>
      <Channels doc={doc} edit={edit} />
      <EdgeAdder doc={doc} edit={edit} />
      </fieldset>
      <h3>Edges</h3>
      <ul className="edge-list">
        {(doc.edges || []).map((e, i) => (
          <li key={i}>
            <button type="button" data-edge={i} onClick={() => setSel({ edge: i })}>{e.from} → {e.to}{e.when ? ' [' + guardText(e.when) + ']' : ''}</button>
          </li>
        ))}
      </ul>
    </aside>
  );
}

function DiagList({ diags }) {
  if (!diags.length) return null;
  return (
    <ul className="placed">
      {diags.map((d, i) => (
        <li key={i} className={'diag ' + d.severity} role="alert">
          {d.message}
          {d.hint ? <em> — {d.hint}</em> : null}
        </li>
      ))}
    </ul>
  );
}

function removeNode(d, id) {
  return { ...d, nodes: d.nodes.filter((n) => n.id !== id), edges: (d.edges || []).filter((e) => e.from !== id && e.to !== id) };
}

function PublishReview({ review, busy, onPublish, onClose }) {
  const [ok, setOk] = useState(false);
  const blocked = review.errors && review.errors.length;
  return (
    <div className="modal" role="dialog" aria-label="Publish review" aria-modal="true">
      <div className="modal-body">
        <h2>Publish revision {review.revision}</h2>
        {review.published ? <p>Over version {review.published} <code>{review.from}</code></p> : <p>First version.</p>}
        {blocked ? <p className="diag error">The document has errors; fix them before publishing.</p> : null}
        {review.changes.length ? (
          <table className="changes">
            <thead><tr><th>change</th><th>subject</th><th>paused threads</th><th>new threads</th><th>why</th></tr></thead>
            <tbody>
              {review.changes.map((c, i) => (
                <tr key={i} className={c.unsafe_paused || c.unsafe_new ? 'unsafe' : 'safe'}>
                  <td>{c.kind}</td><td><code>{c.subject}</code></td>
                  <td>{c.unsafe_paused ? 'unsafe' : 'safe'}</td><td>{c.unsafe_new ? 'unsafe' : 'safe'}</td>
                  <td>{c.detail}{c.reason ? <em> — {c.reason}</em> : null}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
        {review.affected.length ? (
          <>
            <h3>Paused threads this change touches</h3>
            <ul className="affected">
              {review.affected.map((a) => (
                <li key={a.thread} data-thread={a.thread}>
                  <code>{a.thread}</code> ({a.status}) in {(a.nodes || []).join(', ') || '—'}:{' '}
                  {a.continues ? 'continues on the new version' : 'cannot continue on the new version'}
                  {(a.reasons || []).map((r, i) => <div key={i} className="reason">{r.message}{r.fix ? <em> Fix: {r.fix}</em> : null}</div>)}
                </li>
              ))}
            </ul>
          </>
        ) : null}
        {review.unsafe && !blocked ? (
          <label className="confirm">
            <input id="confirm-unsafe" type="checkbox" checked={ok} onChange={(e) => setOk(e.target.checked)} />
            I understand this change is unsafe for running threads and publish it anyway.
          </label>
        ) : null}
        <div className="row">
          <button id="publish-confirm" type="button" disabled={busy || blocked || (review.unsafe && !ok)} onClick={() => onPublish(review.unsafe && ok)}>Publish</button>
          <button type="button" onClick={onClose}>Cancel</button>
        </div>
      </div>
    </div>
  );
}

// Diagram shows the document laid out as SVG when the studio has a
// RenderSVG hook (as an image: it runs no script), else the Mermaid text.
function Diagram({ text, report }) {
  const [svg, setSvg] = useState(undefined);
  const fingerprint = report && report.fingerprint;
  useEffect(() => {
    if (!fingerprint) return;
    let live = true;
    api.diagram(text).then((u) => live && setSvg(u), () => live && setSvg(null));
    return () => { live = false; };
  }, [fingerprint]);
  if (svg) return <div className="code" id="diagram-svg"><img src={svg} alt="Diagram" /></div>;
  return <pre className="code" id="mermaid" aria-label="Diagram (Mermaid)">{report && report.mermaid}</pre>;
}

function Studio() {
  const [types, setTypes] = useState([]);
  const [docs, setDocs] = useState([]);
  const [meta, setMeta] = useState(null); // the open document: id, name, revision, published
  const [source, setSource] = useState(''); // the stored source of meta.revision
  const [saved, setSaved] = useState(''); // the document's text as it was last opened or saved
  const [hist, setHist] = useState({ past: [], doc: null, future: [] });
  const [report, setReport] = useState(null);
  const [sel, setSel] = useState(null);
  const [tab, setTab] = useState('canvas');
  const [status, setStatus] = useState('');
  const [review, setReview] = useState(null);
  const [busy, setBusy] = useState(false);
  const [newName, setNewName] = useState('');
  const [drag, setDrag] = useState({});
  const [kids, setKids] = useState([]); // the graphs a subgraph node may run
  const [stack, setStack] = useState([]); // the documents opened before this one, through subgraph nodes
  // The stored text of a document the canvas cannot draw, and why
  // (readDoc); the page keeps it as it is until it is fixed in the JSON
  // tab. hist.doc is null while it is shown.
  const [broken, setBroken] = useState(null);
  const doc = hist.doc;
  const ro = !!(meta && meta.readOnly);
  const roRef = useRef(ro);
  roRef.current = ro;
  const text = doc ? JSON.stringify(doc, null, 2) : '';
  // Unsaved: edited since the document was opened or last saved. (Not
  // "differs from the stored source": the server stores the canonical
  // form, whose keys may come in another order than the canvas's.)
  const dirty = hist.past.length > 0 && meta && text !== saved;
  const flow = useReactFlow();

  const fail = (e) => setStatus(failure(e));
  const refresh = () => {
    api.documents().then(setDocs, fail);
    api.subgraphs().then(setKids, fail);
  };
  useEffect(() => {
    api.nodeTypes().then(setTypes, fail);
    refresh();
  }, []);

  // load shows a document the studio answered (a draft, a published
  // version). One the canvas cannot draw is shown as its problems and its
  // text, kept as stored; load returns whether the canvas draws it.
  const load = (v) => {
    setMeta(v);
    setSource(v.source);
    setReport(v.report);
    const r = readDoc(v.source, v.name);
    setHist({ past: [], doc: r.doc || null, future: [] });
    setBroken(r.doc ? null : { source: v.source, problems: r.problems });
    setSaved(r.doc ? JSON.stringify(r.doc, null, 2) : v.source);
    setSel(null);
    const more = r.doc ? 0 : r.problems.length - 1;
    setStatus(r.doc ? '' : 'The canvas cannot draw ' + v.name + ': ' + r.problems[0].line + (more ? ' (and ' + more + ' more)' : '') + '; fix it in the JSON tab');
    return !!r.doc;
  };

  // edit applies f to the document as one undo step.
  // A published version opened read-only takes no edit.
  const edit = useCallback((f) => !roRef.current && setHist((h) => ({ past: [...h.past, h.doc], doc: f(h.doc), future: [] })), []);
  const undo = () => setHist((h) => (h.past.length ? { past: h.past.slice(0, -1), doc: h.past[h.past.length - 1], future: [h.doc, ...h.future] } : h));
  const redo = () => setHist((h) => (h.future.length ? { past: [...h.past, h.doc], doc: h.future[0], future: h.future.slice(1) } : h));

  // Live checking: every edit runs the document checker (an undo back to
  // a text the canvas cannot draw checks that text).
  useEffect(() => {
    const src = doc ? text : broken && broken.source;
    if (!src) return;
    const t = setTimeout(() => api.check(src).then(setReport, fail), 150);
    return () => clearTimeout(t);
  }, [text, kids]);

  // save saves the document the canvas draws as a draft revision. There
  // is none while the canvas cannot draw the text: the stored draft is
  // that text already.
  const save = async () => {
    if (!meta || meta.readOnly || !doc) return;
    const at = text;
    try {
      const v = await api.save(meta.id, meta.revision, dirty ? text : source);
      setMeta(v);
      setSource(v.source);
      setSaved(at);
      setReport(v.report);
      setStatus('Saved revision ' + v.revision);
      return v;
    } catch (e) {
      fail(e);
    }
  };

  const startPublish = async () => {
    if (!doc) return;
    const v = dirty ? await save() : meta;
    if (!v) return;
    try {
      setReview(await api.review(v.id, v.revision));
    } catch (e) {
      fail(e);
    }
  };
  const publish = async (confirm) => {
    setBusy(true);
    try {
      const r = await api.publish(meta.id, review.revision, review.published, confirm);
      setMeta({ ...meta, published: r.version.number });
      setStatus('Published version ' + r.version.number + ' ' + r.version.fingerprint);
      setReview(null);
      refresh();
    } catch (e) {
      if (e instanceof Problem && e.problem.review) setReview(e.problem.review);
      fail(e);
    } finally {
      setBusy(false);
    }
  };

  // openChild opens a subgraph node's child: its published version
  // read-only ({published: child of api.subgraphs}) or its draft
  // ({draft: document id}); the breadcrumb returns here, with this
  // document as it was, unsaved edits included.
  const openChild = async (to) => {
    if (!to) {
      setStatus('The child graph is not a document of the studio: publish it, or pick a published graph');
      return;
    }
    try {
      let v;
      if (to.published) {
        const k = to.published;
        const src = await api.published(k.name);
        v = { id: k.document, name: k.name, revision: 0, published: k.version, readOnly: true, source: src, report: await api.check(src) };
      } else {
        v = await api.open(to.draft);
      }
      setStack((st) => [...st, { meta, source, saved, hist, sel, report, broken }]);
      if (load(v)) setStatus('Opened ' + v.name + (v.readOnly ? ' version ' + v.published + ' (read-only)' : "'s draft"));
    } catch (e) {
      fail(e);
    }
  };
  const openRef = useRef(openChild);
  openRef.current = openChild;

  // back returns to the document at depth i of the breadcrumb, saving
  // this draft first when it has unsaved edits.
  const back = async (i) => {
    if (i < 0 || i >= stack.length) return;
    if (dirty && !(await save())) return;
    const f = stack[i];
    setStack(stack.slice(0, i));
    setMeta(f.meta);
    setSource(f.source);
    setSaved(f.saved);
    setHist(f.hist);
    setSel(f.sel);
    setReport(f.report);
    setBroken(f.broken);
    setStatus('Back to ' + f.meta.name);
    refresh();
  };

  useEffect(() => {
    const k = (e) => {
      if (e.altKey && e.key === 'ArrowUp' && stack.length) { e.preventDefault(); back(stack.length - 1); return; }
      const mod = e.ctrlKey || e.metaKey;
      if (!mod || ['INPUT', 'TEXTAREA', 'SELECT'].includes(document.activeElement.tagName)) return;
      if (e.key === 'z' && !e.shiftKey) { e.preventDefault(); undo(); }
      if ((e.key === 'z' && e.shiftKey) || e.key === 'y') { e.preventDefault(); redo(); }
      if (e.key === 's') { e.preventDefault(); save(); }
    };
    window.addEventListener('keydown', k);
    return () => window.removeEventListener('keydown', k);
  });

  const addNode = useCallback((type, at) => {
    edit((d) => {
      let id = type, i = 1;
      while (d.nodes.some((n) => n.id === id)) id = type + '_' + ++i;
      const t = types.find((x) => x.type === type);
      const p = at || { x: 250 + 40 * (d.nodes.length % 3), y: 120 * (d.nodes.length + 1) };
      const n = { id, type };
      if (t && t.config_schema && t.config_schema.properties) n.config = {};
      n['x-studio'] = { x: Math.round(p.x), y: Math.round(p.y) };
      return { ...d, nodes: [...d.nodes, n] };
    });
  }, [types, edit]);

  const byNode = useMemo(() => {
    const m = {};
    for (const d of report ? report.diagnostics : []) {
      if (d.node) (m[d.node] = m[d.node] || []).push(d);
    }
    return m;
  }, [report]);

  const rfNodes = useMemo(() => {
    if (!doc) return [];
    const n = doc.nodes.length;
    const mk = (id, type, i) => {
      const ds = byNode[id] || [];
      const sub = i >= 0 && type === SUBGRAPH ? subgraphOf(doc.nodes[i]) : '';
      return {
        id, type: 'g', position: drag[id] || posOf(doc, id, i, n), selected: sel && sel.node === id,
        data: { id, type, terminal: id === START || id === END, errors: ds.filter((d) => d.severity === 'error'), warnings: ds.filter((d) => d.severity === 'warning'),
          sub: sub || undefined, onOpen: () => openRef.current(openTargetRef.current(sub)) },
        deletable: id !== START && id !== END,
      };
    };
    return [mk(START, '', -1), ...doc.nodes.map((x, i) => mk(x.id, x.type, i)), mk(END, '', -1)];
  }, [doc, byNode, drag, sel]);

  // openTarget is what opening graph g from the canvas opens: its
  // published version, else the draft of the document of that name.
  const openTarget = (g) => {
    const k = kids.find((x) => x.graph === g);
    if (k) return { published: k };
    const d = docs.find((x) => x.name === g);
    return d ? { draft: d.id } : null;
  };
  const openTargetRef = useRef(openTarget);
  openTargetRef.current = openTarget;

  const rfEdges = useMemo(() => {
    if (!doc) return [];
    const bad = new Set((report ? report.diagnostics : []).filter((d) => d.edge >= 0).map((d) => d.edge));
    return (doc.edges || []).map((e, i) => ({
      id: 'e' + i, source: e.from, target: e.to, label: guardText(e.when) || undefined,
      selected: sel && sel.edge === i, className: bad.has(i) ? 'edge-bad' : e.when ? 'edge-guarded' : '',
      markerEnd: { type: MarkerType.ArrowClosed },
    }));
  }, [doc, report, sel]);

  const onNodesChange = (changes) => {
    for (const c of changes) {
      // A node selected from the keyboard (Tab to it, Enter) shows in the inspector.
      if (c.type === 'select' && c.selected && c.id !== START && c.id !== END) setSel({ node: c.id });
      if (c.type !== 'position') continue;
      if (c.dragging && c.position) setDrag((m) => ({ ...m, [c.id]: c.position }));
      if (!c.dragging) {
        setDrag((m) => {
          const p = m[c.id];
          if (p) edit((d) => withPos(d, c.id, p));
          return omit(m, c.id);
        });
      }
    }
    applyNodeChanges(changes, rfNodes);
  };

  const pick = (d) => {
    setTab('canvas');
    if (d.node) setSel({ node: d.node });
    else if (d.edge >= 0) setSel({ edge: d.edge });
  };

  return (
    <div className="studio">
      <header>
        <h1>ilmek studio</h1>
        <select aria-label="Document" value={meta ? meta.id : ''} onChange={(e) => e.target.value && api.open(e.target.value).then((v) => { setStack([]); load(v); }, fail)}>
          <option value="">Open a document…</option>
          {docs.map((d) => <option key={d.id} value={d.id}>{d.name}{d.published ? ' (v' + d.published + ')' : ''}</option>)}
        </select>
        <input id="new-name" aria-label="New document name" placeholder="new document name" value={newName} onChange={(e) => setNewName(e.target.value)} />
        <button id="new-doc" type="button" disabled={!newName} onClick={() => api.create(newName).then((v) => { setStack([]); load(v); setNewName(''); return api.documents().then(setDocs); }).catch(fail)}>New</button>
        {meta && ro ? (
          <>
            <span className="meta readonly">{meta.name} · version {meta.published} · read-only</span>
            <button id="edit-draft" type="button" onClick={() => api.open(meta.id).then(load, fail)}>Edit the draft</button>
          </>
        ) : meta ? (
          <>
            <button type="button" onClick={undo} disabled={!hist.past.length} aria-keyshortcuts="Control+Z">Undo</button>
            <button type="button" onClick={redo} disabled={!hist.future.length} aria-keyshortcuts="Control+Shift+Z">Redo</button>
            <button id="save" type="button" onClick={save} disabled={!doc} aria-keyshortcuts="Control+S">Save draft</button>
            <button id="publish" type="button" onClick={startPublish} disabled={!doc}>Publish…</button>
            <span className="meta">rev {meta.revision}{meta.published ? ' · published v' + meta.published : ''}{dirty ? ' · unsaved' : ''}</span>
          </>
        ) : null}
        <span id="status" role="status">{status}</span>
      </header>
      {stack.length ? (
        <nav className="crumbs" aria-label="Breadcrumb">
          <ol>
            {stack.map((f, i) => (
              <li key={i}>
                <button type="button" data-crumb={i} onClick={() => back(i)} aria-keyshortcuts={i === stack.length - 1 ? 'Alt+ArrowUp' : undefined}
                  title={i === stack.length - 1 ? 'Back to the parent (Alt+↑)' : undefined}>
                  {f.meta.name}{f.meta.readOnly ? ' v' + f.meta.published : ''}
                </button>
              </li>
            ))}
            <li aria-current="page">{meta.name}{ro ? ' v' + meta.published + ' (read-only)' : ' (draft)'}</li>
          </ol>
        </nav>
      ) : null}
      {doc || broken ? (
        <main>
          {!doc ? (
            <aside className="palette" aria-label="Node types"><p>The canvas cannot draw this document: fix its text in the JSON tab to add nodes.</p></aside>
          ) : ro ? (
            <aside className="palette" aria-label="Node types"><p>A published version, read-only: <b>Edit the draft</b> to change it.</p></aside>
          ) : (
            <Palette types={types} onAdd={(t) => addNode(t)} />
          )}
          <section className="center">
            <nav className="tabs" role="tablist">
              {['canvas', 'diagram', 'json'].map((t) => (
                <button key={t} id={'tab-' + t} role="tab" aria-selected={tab === t} type="button" onClick={() => setTab(t)}>{t}</button>
              ))}
            </nav>
            {!doc ? <Unreadable problems={broken.problems} onFix={tab === 'json' ? null : () => setTab('json')} /> : null}
            {!doc && tab === 'canvas' ? (
              <div className="canvas" />
            ) : tab === 'canvas' ? (
              <div className="canvas" onDragOver={(e) => { e.preventDefault(); e.dataTransfer.dropEffect = 'move'; }}
                onDrop={(e) => {
                  const t = e.dataTransfer.getData('application/x-ilmek-type');
                  if (t) { e.preventDefault(); addNode(t, flow.screenToFlowPosition({ x: e.clientX, y: e.clientY })); }
                }}>
                <ReactFlow key={(meta && meta.id) + (ro ? ':ro' : '')} nodes={rfNodes} edges={rfEdges} nodeTypes={nodeTypes} fitView
                  nodesDraggable={!ro} nodesConnectable={!ro} deleteKeyCode={ro ? null : 'Backspace'}
                  onNodesChange={onNodesChange}
                  onNodeDoubleClick={(_, n) => n.data.sub && n.data.onOpen()}
                  onConnect={(c) => edit((d) => ({ ...d, edges: [...(d.edges || []), { from: c.source, to: c.target }] }))}
                  onNodeClick={(_, n) => setSel({ node: n.id })}
                  onEdgeClick={(_, e) => setSel({ edge: Number(e.id.slice(1)) })}
                  onPaneClick={() => setSel(null)}
                  onNodesDelete={(ns) => edit((d) => ns.reduce((x, n) => removeNode(x, n.id), d))}
                  onEdgesDelete={(es) => { const gone = new Set(es.map((e) => Number(e.id.slice(1)))); edit((d) => ({ ...d, edges: d.edges.filter((_, i) => !gone.has(i)) })); }}>
                  <Background />
                  <Controls />
                </ReactFlow>
              </div>
            ) : tab === 'diagram' ? (
              <Diagram text={text} report={report} />
            ) : (
              <JSONTab text={doc ? (report && report.canonical) || text : broken.source} onApply={(d) => edit(() => d)} />
            )}
            <Diagnostics report={report} onPick={pick} />
          </section>
          {doc ? (
            <Inspector doc={doc} sel={sel} types={types} report={report} edit={edit} setSel={setSel}
              kids={kids} docs={docs} onOpen={(to) => openChild(to)} ro={ro} />
          ) : (
            <aside className="inspector" aria-label="Inspector"><h2>Graph <code>{meta.name}</code></h2></aside>
          )}
        </main>
      ) : (
        <p className="empty">Open a document or create one to start.</p>
      )}
      {review ? <PublishReview review={review} busy={busy} onPublish={publish} onClose={() => setReview(null)} /> : null}
    </div>
  );
}

// failure is what the status line says of a failed action: a Problem's
// title and detail (the studio's words: what is wrong, where, how to fix
// it; an internal error's detail names its error id), or, for an error of
// the page itself, that the page failed and what to do.
function failure(e) {
  if (e instanceof Problem) {
    const p = e.problem;
    return (p.title || 'The request failed') + (p.detail ? ': ' + p.detail : '');
  }
  return 'The page failed (' + (e && e.message ? e.message : String(e)) + '); reload it to go on';
}

// kindOf names the kind of a JSON value, for the JSON tab's messages.
function kindOf(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number' || isRaw(v)) return 'a number';
  return typeof v === 'object' ? 'an object' : 'a ' + (typeof v === 'boolean' ? 'boolean' : typeof v);
}

// docOf reads the JSON tab's text as a document the canvas can draw: an
// object whose members the page reads have the kinds it reads
// (shapeProblems: nodes and edges arrays of objects, channels an object
// of objects...; the document checker reports anything else wrong with
// it). It throws an Error that says what is wrong, where, and how to fix
// it.
function docOf(t) {
  let d;
  try {
    d = parseJSON(t);
  } catch (e) {
    throw new Error(syntaxMessage(t, e) + '; fix it and apply again.');
  }
  const p = shapeProblems(d)[0];
  if (p) {
    const want = p.want === 'a list' ? 'an array' : p.want;
    if (!p.path) {
      throw new Error('The document must be a JSON object, {"name": …, "channels": {…}, "nodes": […], "edges": […]}, not ' + kindOf(d) + '; fix it and apply again.');
    }
    const member = /^\w+$/.test(p.path);
    throw new Error((member ? '"' + p.path + '" must be ' + want + ', e.g. "' + p.path + '": ' : p.path + ' must be ' + want + ' such as ') +
      p.example + ', not ' + kindOf(p.value) + '; fix it and apply again.');
  }
  return { ...d, nodes: d.nodes || [], edges: d.edges || [] };
}

// Unreadable stands in for the canvas while the document's text has
// members the canvas cannot draw: one line per problem, naming the
// member, and how to fix it. The text stays as it was stored, in the JSON
// tab, until it is fixed there and applied.
function Unreadable({ problems, onFix }) {
  return (
    <section className="unreadable" role="alert" aria-label="Why the canvas cannot draw the document">
      <h2>The canvas cannot draw this document</h2>
      <ul className="placed">
        {problems.map((p, i) => (
          <li key={i} className="diag error">
            {p.path ? <><code>{p.path}</code>{p.line.slice(p.path.length)}</> : p.line}
            <em> — {p.hint}</em>
          </li>
        ))}
      </ul>
      <p>
        Its text is kept as it was stored; nothing is saved over it until it is fixed in the JSON tab and applied.{' '}
        {onFix ? <button id="fix-json" type="button" onClick={onFix}>Fix it in the JSON tab</button> : null}
      </p>
    </section>
  );
}

function JSONTab({ text, onApply }) {
  const [t, setT] = useState(text);
  const [err, setErr] = useState('');
  const last = useRef(text);
  useEffect(() => { if (text !== last.current) { setT(text); last.current = text; } }, [text]);
  return (
    <div className="json">
      <textarea id="json" aria-label="Document (canonical JSON)" value={t} onChange={(e) => setT(e.target.value)} spellCheck={false} />
      <div className="row">
        <button id="json-apply" type="button" onClick={() => { try { onApply(docOf(t)); setErr(''); } catch (e) { setErr(e.message); } }}>Apply JSON</button>
        {err ? <span id="json-error" className="diag error" role="alert">{err}</span> : null}
      </div>
    </div>
  );
}

// readDoc reads a document's stored text as a document the canvas can
// draw ({doc}), or says why it cannot ({problems}: each the member's
// path, a line naming it, "nodes: is an object, not a list", and a hint;
// a syntax error has no path). Empty text is an empty document named
// name.
function readDoc(s, name) {
  if (s.trim() === '') return { doc: emptyDoc(name) };
  let d;
  try {
    d = parseJSON(s);
  } catch (e) {
    return { problems: [{ line: syntaxMessage(s, e), hint: 'fix the text in the JSON tab and apply it' }] };
  }
  const ps = shapeProblems(d);
  if (ps.length) return { problems: ps.map((p) => ({ path: p.path, line: problemLine(p), hint: problemHint(p) })) };
  return { doc: { ...d, nodes: d.nodes || [], edges: d.edges || [] } };
}

function emptyDoc(name) {
  return { name, channels: {}, nodes: [], edges: [] };
}

createRoot(document.getElementById('root')).render(
  <StrictMode>
    <ReactFlowProvider>
      <Studio />
    </ReactFlowProvider>
  </StrictMode>,
);
