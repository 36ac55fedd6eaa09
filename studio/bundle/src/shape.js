// The shape of a document the page can draw. The canvas, the inspector
// and the forms read a document's members as lists and objects (they map
// its nodes, look its channels up, ask which operator a guard holds); a
// document read from elsewhere (a stored draft, the JSON tab) may have
// any member of any kind. shapeProblems finds each member the page reads
// whose kind it cannot read, so the page says so, placed, instead of
// failing, and leaves the text as it was. Everything else wrong with a
// document is the document checker's to report.

import { isRaw } from './json.js';

const LIST = 'a list';
const OBJECT = 'an object';
const STRING = 'a string';

// kindOf names the kind of a JSON value, in the words of the page's
// one-line problems ("a list" for an array).
export function kindOf(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return LIST;
  if (typeof v === 'number' || isRaw(v)) return 'a number';
  if (typeof v === 'boolean') return 'true or false';
  return typeof v === 'object' ? OBJECT : 'a ' + typeof v;
}

// isObject is a JSON object (not null, a list or a kept number literal).
export const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !isRaw(v);

const is = { [LIST]: Array.isArray, [OBJECT]: isObject, [STRING]: (v) => typeof v === 'string' };

// Examples of each member, for the hint: what to write instead.
const EXAMPLE = {
  document: '{"name": "graph", "channels": {}, "nodes": [], "edges": []}',
  nodes: '[{"id": "a", "type": "say"}]',
  node: '{"id": "a", "type": "say"}',
  edges: '[{"from": "__start__", "to": "a"}]',
  edge: '{"from": "__start__", "to": "a"}',
  channels: '{"log": {"reducer": "append"}}',
  channel: '{"reducer": "append"}',
  id: '"a"',
  when: '{"channel": "n", "eq": "yes"}',
  goto: '["a", "b"]',
};

// key is a member's path segment, as the document checker writes paths
// (nodes[0].config.text, channels["a b"]).
function key(parent, k) {
  const seg = /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? k : '[' + JSON.stringify(k) + ']';
  return parent && !seg.startsWith('[') ? parent + '.' + seg : parent + seg;
}

// shapeProblems lists the members of d the page cannot read: each a path
// ('' is the document), its value, the kind it is, the kind it must be
// and an example of it. A member that is absent is not a problem (the
// document checker says which ones the document needs); null is one,
// but for a guard, which the page reads as no guard.
export function shapeProblems(d) {
  const out = [];
  const want = (path, v, kind, example) => {
    if (v === undefined || is[kind](v)) return true;
    out.push({ path, value: v, is: kindOf(v), want: kind, example });
    return false;
  };
  if (!want('', d, OBJECT, EXAMPLE.document)) return out;
  want('name', d.name, STRING, '"graph"');
  if (want('channels', d.channels, OBJECT, EXAMPLE.channels) && d.channels) {
    for (const [c, ch] of Object.entries(d.channels)) want(key('channels', c), ch, OBJECT, EXAMPLE.channel);
  }
  if (want('nodes', d.nodes, LIST, EXAMPLE.nodes) && d.nodes) {
    d.nodes.forEach((n, i) => {
      const at = 'nodes[' + i + ']';
      if (!want(at, n, OBJECT, EXAMPLE.node)) return;
      want(at + '.id', n.id, STRING, EXAMPLE.id);
      want(at + '.type', n.type, STRING, '"say"');
      want(at + '.goto', n.goto, LIST, EXAMPLE.goto);
    });
  }
  if (want('edges', d.edges, LIST, EXAMPLE.edges) && d.edges) {
    d.edges.forEach((e, i) => {
      const at = 'edges[' + i + ']';
      if (!want(at, e, OBJECT, EXAMPLE.edge)) return;
      want(at + '.from', e.from, STRING, '"__start__"');
      want(at + '.to', e.to, STRING, EXAMPLE.id);
      if (e.when !== null) want(at + '.when', e.when, OBJECT, EXAMPLE.when); // null: the checker's to report
    });
  }
  return out;
}

// problemLine is a problem in one line, naming the member: "nodes: is an
// object, not a list".
export function problemLine(p) {
  return (p.path || 'the document') + ': is ' + p.is + ', not ' + p.want;
}

// problemHint says how to fix a problem: what to write in the JSON tab.
export function problemHint(p) {
  const m = /(?:^|\.)([A-Za-z_][A-Za-z0-9_]*)$/.exec(p.path);
  const what = !p.path ? 'the document as ' + p.example : m ? '"' + m[1] + '": ' + p.example : p.path + ' as ' + p.example;
  return 'write ' + what + ' in the JSON tab and apply it';
}
