import { useState } from 'react';
import { TextInput } from './forms.jsx';

// SubgraphForm edits a "subgraph" node's config (spec.SubgraphConfig):
// the child graph, picked from the studio's published graphs (kids, from
// GET api/subgraphs), an optional pin of its fingerprint, and the two
// channel maps as pairs whose choices are the child's channels and the
// parent document's (channels). A name typed that neither declares stays,
// so the live check places its error on the node.
export function SubgraphForm({ value, onChange, kids, channels }) {
  const cfg = value && typeof value === 'object' && !Array.isArray(value) ? value : {};
  const child = kids.find((k) => k.graph === cfg.graph);
  const childChans = child ? child.channels.map((c) => c.name) : [];
  const set = (k, v) => {
    const next = { ...cfg };
    if (v === undefined || (typeof v === 'object' && !Object.keys(v).length)) delete next[k];
    else next[k] = v;
    onChange(next);
  };
  const pick = (g) => {
    const next = { ...cfg, graph: g };
    if (!g) delete next.graph;
    delete next.fingerprint;
    onChange(next);
  };
  return (
    <div className="form" data-testid="subgraph-form">
      <div className="field">
        <label htmlFor="sub-graph">child graph <small>a published document</small></label>
        <select id="sub-graph" value={cfg.graph || ''} onChange={(e) => pick(e.target.value)}>
          <option value="">(choose a published graph)</option>
          {kids.map((k) => (
            <option key={k.graph} value={k.graph}>{k.graph} · v{k.version}{k.name !== k.graph ? ' (' + k.name + ')' : ''}</option>
          ))}
          {cfg.graph && !child ? <option value={cfg.graph}>{cfg.graph} (not published)</option> : null}
        </select>
      </div>
      {child ? (
        <div className="field check">
          <input id="sub-pin" type="checkbox" checked={typeof cfg.fingerprint === 'string'}
            onChange={(e) => set('fingerprint', e.target.checked ? child.fingerprint : undefined)} />
          <label htmlFor="sub-pin">pin version {child.version} <small><code>{child.fingerprint.slice(0, 16)}</code></small></label>
        </div>
      ) : null}
      {child && typeof cfg.fingerprint === 'string' && cfg.fingerprint !== child.fingerprint ? (
        <div className="row">
          <span className="diag warning">pinned at another version</span>
          <button id="sub-repin" type="button" onClick={() => set('fingerprint', child.fingerprint)}>Pin version {child.version}</button>
        </div>
      ) : null}
      <ChannelMap id="sub-in" title="in: child channel ← parent channel" map={cfg.in} keys={childChans} values={channels}
        keyLabel="child channel" valueLabel="parent channel" onChange={(m) => set('in', m)} />
      <ChannelMap id="sub-out" title="out: parent channel ← child channel" map={cfg.out} keys={channels} values={childChans}
        keyLabel="parent channel" valueLabel="child channel" onChange={(m) => set('out', m)} />
    </div>
  );
}

// ChannelMap edits one map of channel names as pairs: each pair's two
// fields suggest the names of their side (a datalist), and a new pair is
// added with the last row.
function ChannelMap({ id, title, map, keys, values, keyLabel, valueLabel, onChange }) {
  const m = map && typeof map === 'object' && !Array.isArray(map) ? map : {};
  const [k, setK] = useState('');
  const [v, setV] = useState('');
  // put replaces pair old (undefined: none) with nk → nv (nk '': removed).
  const put = (old, nk, nv) => {
    const next = {};
    for (const [a, b] of Object.entries(m)) {
      if (a !== old) next[a] = b;
      else if (nk) next[nk] = nv;
    }
    if (old === undefined && nk) next[nk] = nv;
    onChange(next);
  };
  const add = () => {
    if (!k.trim() || !v.trim()) return;
    put(undefined, k.trim(), v.trim());
    setK('');
    setV('');
  };
  return (
    <fieldset className="chanmap" data-map={id}>
      <legend>{title}</legend>
      <datalist id={id + '-keys'}>{keys.map((c) => <option key={c} value={c} />)}</datalist>
      <datalist id={id + '-values'}>{values.map((c) => <option key={c} value={c} />)}</datalist>
      {Object.entries(m).map(([a, b], i) => (
        <div className="row pair" key={a} data-pair={a}>
          <TextInput id={id + '-key-' + i} list={id + '-keys'} label={keyLabel + ' of pair ' + (i + 1)} value={a} onCommit={(s) => put(a, s.trim(), b)} />
          <span aria-hidden="true">←</span>
          <TextInput id={id + '-value-' + i} list={id + '-values'} label={valueLabel + ' of pair ' + (i + 1)} value={String(b)} onCommit={(s) => s.trim() && put(a, a, s.trim())} />
          <button type="button" aria-label={'remove pair ' + a} onClick={() => put(a, '')}>×</button>
        </div>
      ))}
      <div className="row pair">
        <input id={id + '-new-key'} list={id + '-keys'} aria-label={'new ' + keyLabel} placeholder={keyLabel} value={k}
          onChange={(e) => setK(e.target.value)} onKeyDown={(e) => e.key === 'Enter' && (e.preventDefault(), add())} />
        <span aria-hidden="true">←</span>
        <input id={id + '-new-value'} list={id + '-values'} aria-label={'new ' + valueLabel} placeholder={valueLabel} value={v}
          onChange={(e) => setV(e.target.value)} onKeyDown={(e) => e.key === 'Enter' && (e.preventDefault(), add())} />
        <button id={id + '-add'} type="button" disabled={!k.trim() || !v.trim()} onClick={add}>Add</button>
      </div>
    </fieldset>
  );
}
