import { useState, useEffect } from 'react';
import { isRaw, number, parseJSON, show, syntaxMessage } from './json.js';

// ConfigForm edits a node's config from its type's JSON Schema (what
// `ilmekgen schema --config` prints): a field per property of a flat
// object schema, else a JSON text area.
export function ConfigForm({ schema, value, onChange }) {
  const props = schema && schema.type === 'object' && schema.properties;
  const flat = props && Object.values(props).every((p) => ['string', 'integer', 'number', 'boolean'].includes(kindOf(p)) || stringList(p));
  if (!flat) return <JSONField value={value} onChange={onChange} />;
  const v = value && typeof value === 'object' ? value : {};
  const required = new Set(schema.required || []);
  const set = (k, x) => {
    const next = { ...v };
    if (x === undefined) delete next[k];
    else next[k] = x;
    onChange(next);
  };
  return (
    <div className="form" data-testid="config-form">
      {Object.entries(props).map(([k, p]) => (
        <Field key={k} name={k} prop={p} required={required.has(k)} value={v[k]} onChange={(x) => set(k, x)} />
      ))}
    </div>
  );
}

function kindOf(p) {
  const t = Array.isArray(p.type) ? p.type.find((x) => x !== 'null') : p.type;
  if (p.enum && !t) return 'string';
  return t;
}

// stringList is an array of strings, edited as comma-separated text.
function stringList(p) {
  return kindOf(p) === 'array' && p.items && kindOf(p.items) === 'string' && !p.items.enum;
}

function Field({ name, prop, required, value, onChange }) {
  const id = 'cfg-' + name;
  const kind = kindOf(prop);
  const label = (
    <label htmlFor={id}>
      {name}
      {required ? ' *' : ''}
      {prop.description ? <small> {prop.description}</small> : null}
    </label>
  );
  if (kind === 'boolean') {
    return (
      <div className="field check">
        <input id={id} type="checkbox" checked={value === true} onChange={(e) => onChange(e.target.checked)} />
        {label}
      </div>
    );
  }
  if (stringList(prop)) {
    return (
      <div className="field">
        {label}
        <TextInput id={id} placeholder="comma-separated" value={Array.isArray(value) ? value.join(', ') : ''}
          onCommit={(s) => onChange(s.trim() === '' ? undefined : s.split(',').map((x) => x.trim()).filter(Boolean))} />
      </div>
    );
  }
  if (prop.enum) {
    return (
      <div className="field">
        {label}
        <select id={id} value={value === undefined ? '' : show(value)} onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)}>
          <option value="">(unset)</option>
          {prop.enum.map((o) => (
            <option key={String(o)} value={String(o)}>{String(o)}</option>
          ))}
        </select>
      </div>
    );
  }
  return (
    <div className="field">
      {label}
      <TextInput
        id={id}
        value={value === undefined ? '' : show(value)}
        onCommit={(s) => {
          if (s === '') return onChange(undefined);
          if (kind === 'integer' || kind === 'number') {
            const n = number(s);
            return onChange(n === null ? s : n);
          }
          onChange(s);
        }}
      />
    </div>
  );
}

// TextInput keeps its text while typing and commits on change, so each
// keystroke is not an undo step of its own.
export function TextInput({ id, value, onCommit, placeholder, list, label }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  return (
    <input
      id={id}
      value={text}
      placeholder={placeholder}
      list={list}
      aria-label={label}
      onChange={(e) => setText(e.target.value)}
      onBlur={() => text !== value && onCommit(text)}
      onKeyDown={(e) => {
        if (e.key === 'Enter') {
          e.preventDefault();
          if (text !== value) onCommit(text);
        }
      }}
    />
  );
}

function JSONField({ value, onChange }) {
  const initial = value === undefined ? '' : JSON.stringify(value, null, 2);
  const [text, setText] = useState(initial);
  const [err, setErr] = useState('');
  useEffect(() => setText(initial), [initial]);
  return (
    <div className="field">
      <label htmlFor="cfg-json">config (JSON)</label>
      <textarea id="cfg-json" rows={6} value={text} onChange={(e) => setText(e.target.value)}
        onBlur={() => {
          if (text.trim() === '') return onChange(undefined);
          try {
            onChange(parseJSON(text));
            setErr('');
          } catch (e) {
            setErr(syntaxMessage(text, e) + '; fix it and leave the field to apply it.');
          }
        }} />
      {err ? <div className="diag error">{err}</div> : null}
    </div>
  );
}

export const OPS = ['eq', 'neq', 'in', 'gt', 'lt', 'truthy'];

// GuardForm edits an edge's "when": a channel of the document, one
// operator and a literal of the kind chosen. It starts from the edge's
// guard when mounted (give it the edge as its key).
export function GuardForm({ channels, when, onChange }) {
  const op = when ? OPS.find((o) => o in when) || 'eq' : '';
  const [channel, setChannel] = useState(when ? when.channel : channels[0] || '');
  const [o, setO] = useState(op || 'eq');
  const lit = when && op ? when[op] : '';
  const [kind, setKind] = useState(literalKind(lit));
  const [text, setText] = useState(lit === '' ? '' : litText(lit));
  const apply = () => {
    const g = { ...(when || {}) };
    for (const x of OPS) delete g[x];
    g.channel = channel;
    g[o] = o === 'truthy' ? text !== 'false' : o === 'in' ? text.split(',').map((s) => toLiteral(kind, s.trim())) : toLiteral(kind, text);
    onChange(g);
  };
  return (
    <div className="form" data-testid="guard-form">
      <div className="field">
        <label htmlFor="guard-channel">channel</label>
        <select id="guard-channel" value={channel} onChange={(e) => setChannel(e.target.value)}>
          {channels.map((c) => <option key={c} value={c}>{c}</option>)}
        </select>
      </div>
      <div className="field">
        <label htmlFor="guard-op">operator</label>
        <select id="guard-op" value={o} onChange={(e) => setO(e.target.value)}>
          {OPS.map((x) => <option key={x} value={x}>{x}</option>)}
        </select>
      </div>
      <div className="field">
        <label htmlFor="guard-kind">literal kind</label>
        <select id="guard-kind" value={kind} onChange={(e) => setKind(e.target.value)}>
          {['string', 'number', 'boolean', 'null'].map((x) => <option key={x} value={x}>{x}</option>)}
        </select>
      </div>
      <div className="field">
        <label htmlFor="guard-value">literal{o === 'in' ? 's (comma-separated)' : ''}</label>
        <input id="guard-value" value={text} onChange={(e) => setText(e.target.value)} />
      </div>
      <div className="row">
        <button id="guard-apply" type="button" onClick={apply} disabled={!channel}>Set guard</button>
        {when ? <button id="guard-remove" type="button" onClick={() => onChange(undefined)}>Remove guard</button> : null}
      </div>
    </div>
  );
}

function literalKind(v) {
  if (Array.isArray(v)) return v.length ? literalKind(v[0]) : 'string';
  if (v === null) return 'null';
  if (typeof v === 'number' || isRaw(v)) return 'number';
  if (typeof v === 'boolean') return 'boolean';
  return 'string';
}

function litText(v) {
  if (Array.isArray(v)) return v.map(litText).join(', ');
  return v === null ? 'null' : show(v);
}

// toLiteral reads text as the chosen kind; text that is not a number
// stays a string, so the document checker reports the wrong literal.
function toLiteral(kind, s) {
  switch (kind) {
    case 'number': {
      const n = number(s);
      return n === null ? s : n;
    }
    case 'boolean':
      return s === 'true';
    case 'null':
      return null;
    default:
      return s;
  }
}
