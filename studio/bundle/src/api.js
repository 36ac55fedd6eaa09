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

export const api = {
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
