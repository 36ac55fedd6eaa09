// Lossless JSON for the page: JSON.parse turns every number into a
// float64, so a literal such as 1.0, 1e3 or an integer past 2^53 would
// come back from JSON.stringify as other text after any edit. parseJSON
// keeps such a literal as JSON.rawJSON(its text), which JSON.stringify
// writes back verbatim; literals JSON.stringify writes the same stay
// numbers.

export const isRaw = (v) => typeof JSON.isRawJSON === 'function' && JSON.isRawJSON(v);

export function parseJSON(s) {
  if (typeof JSON.rawJSON !== 'function') return JSON.parse(s);
  return JSON.parse(s, (_, v, ctx) => (typeof v === 'number' && ctx && ctx.source !== JSON.stringify(v) ? JSON.rawJSON(ctx.source) : v));
}

// show is a value's text for a form: a kept literal's own text.
export const show = (v) => (isRaw(v) ? v.rawJSON : String(v));

// number reads a number typed into a form, keeping its text when
// JSON.stringify would write it differently (null when s is not one).
export function number(s) {
  const t = s.trim();
  const n = Number(t);
  if (t === '' || !Number.isFinite(n)) return null;
  if (JSON.stringify(n) === t || typeof JSON.rawJSON !== 'function') return n;
  try {
    return JSON.rawJSON(t);
  } catch {
    return n; // not JSON number text (".5", "+1"): its value
  }
}
