// The studio's JSON API (GET api/openapi.json describes it). Paths are
// relative, so the studio works under any prefix it is mounted at.

export class Problem extends Error {
  constructor(p) {
    super(p.detail || p.title);
    this.problem = p;
  }
}

// request is fetch, with a request that does not reach the studio (it is
// down, the network is) thrown as a Problem that says so, instead of the
// browser's "Failed to fetch".
async function request(path, init) {
  try {
    return await fetch(path, init);
  } catch {
    throw new Problem({
      status: 0,
      title: 'The studio cannot be reached',
      detail: 'the request did not reach it (is it running, is the network up?); your edits are still in this page: try again once it is back',
    });
  }
}

// failed reads the Problem of a failed response. An answer that is not
// the studio's problem JSON (a proxy's error page, an empty body) is a
// Problem that says so, instead of the JSON parser's error.
async function failed(res) {
  if ((res.headers.get('Content-Type') || '').includes('json')) {
    try {
      const p = await res.json();
      if (p && typeof p === 'object' && (p.title || p.detail)) return new Problem(p);
    } catch {
      // not JSON after all: said below
    }
  }
  return new Problem({
    status: res.status,
    title: 'The studio answered ' + res.status + (res.statusText ? ' ' + res.statusText : ''),
    detail: 'the answer is not the studio\'s (a proxy or gateway between may have failed); try again, and ask the operator if it goes on',
  });
}

async function call(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await request(path, init);
  if (res.status === 204) return null;
  if (!res.ok) throw await failed(res);
  return res.json();
}

// diagram asks the studio to lay a document out as SVG (Config.RenderSVG);
// it resolves to a data: URL, or null when the studio draws no SVG (501).
async function diagram(source) {
  const res = await request('api/diagram', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ source }) });
  if (res.status === 501) return null;
  if (!res.ok) throw await failed(res);
  const bytes = new Uint8Array(await res.arrayBuffer());
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return 'data:image/svg+xml;base64,' + btoa(bin);
}

// published reads the published version of the document named name:
// its source text.
async function published(name) {
  const res = await request('api/published/' + encodeURIComponent(name));
  if (!res.ok) throw await failed(res);
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
