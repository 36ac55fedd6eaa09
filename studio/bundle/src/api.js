// The studio's JSON API (GET api/openapi.json describes it). Paths are
// relative, so the studio works under any prefix it is mounted at.

export class Problem extends Error {
  constructor(p) {
    super(p.detail || p.title);
    this.problem = p;
  }
}

async function call(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  if (res.status === 204) return null;
  const data = await res.json();
  if (!res.ok) throw new Problem(data);
  return data;
}

// diagram asks the studio to lay a document out as SVG (Config.RenderSVG);
// it resolves to a data: URL, or null when the studio draws no SVG (501).
async function diagram(source) {
  const res = await fetch('api/diagram', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ source }) });
  if (res.status === 501) return null;
  if (!res.ok) throw new Problem(await res.json());
  const bytes = new Uint8Array(await res.arrayBuffer());
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return 'data:image/svg+xml;base64,' + btoa(bin);
}

// published reads the published version of the document named name:
// its source text.
async function published(name) {
  const res = await fetch('api/published/' + encodeURIComponent(name));
  if (!res.ok) throw new Problem(await res.json());
  return res.text();
}

export const api = {
  diagram,
  published,
  subgraphs: () => call('GET', 'api/subgraphs').then((r) => r.children),
  nodeTypes: () => call('GET', 'api/node-types').then((r) => r.node_types),
  documents: () => call('GET', 'api/documents').then((r) => r.documents),
  create: (name) => call('POST', 'api/documents', { name }),
  open: (id) => call('GET', 'api/documents/' + id),
  save: (id, base, source) => call('PUT', 'api/documents/' + id + '/draft', { base, source }),
  rename: (id, name) => call('PATCH', 'api/documents/' + id, { name }),
  remove: (id) => call('DELETE', 'api/documents/' + id),
  check: (source) => call('POST', 'api/check', { source }),
  review: (id, revision) => call('GET', 'api/documents/' + id + '/review?revision=' + revision),
  publish: (id, revision, published, confirmUnsafe) =>
    call('POST', 'api/documents/' + id + '/publish', { revision, published, confirm_unsafe: confirmUnsafe }),
};
