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

// syntaxError finds the first syntax error of text, which JSON.parse
// refused: its offset and what was expected there, in the same words in
// every browser (their own messages differ, and some give no position).
// It returns null when it finds none.
export function syntaxError(text) {
  let i = 0;
  const fail = (what) => {
    const e = new Error(what);
    e.offset = i;
    throw e;
  };
  const found = () => (i >= text.length ? 'the end of the text' : JSON.stringify(text[i]));
  const ws = () => { while (i < text.length && ' \t\n\r'.includes(text[i])) i++; };
  const lit = (word) => {
    if (text.startsWith(word, i)) i += word.length;
    else fail('expected a value (a string, number, object, array, true, false or null), found ' + found());
  };
  const string = () => {
    i++; // the opening quote
    for (;;) {
      if (i >= text.length) fail('a string is not closed with "');
      const c = text[i];
      if (c === '"') { i++; return; }
      if (c < ' ') fail('a string holds a control character (write a line break as \\n, a tab as \\t)');
      if (c === '\\') {
        const n = text[i + 1];
        if (n === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 6;
        else if (n !== undefined && '"\\/bfnrt'.includes(n)) i += 2;
        else fail('a string has an escape JSON does not know: write \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX');
      } else i++;
    }
  };
  const num = () => {
    const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(i));
    if (!m || m[0] === '-' || m[0] === '') fail('expected a value (a string, number, object, array, true, false or null), found ' + found());
    i += m[0].length;
  };
  const value = (depth) => {
    if (depth > 512) fail('the document nests too deep');
    ws();
    const c = text[i];
    if (c === '{') {
      i++; ws();
      if (text[i] === '}') { i++; return; }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a member name in double quotes, found ' + found());
        string(); ws();
        if (text[i] !== ':') fail("expected ':' after a member name, found " + found());
        i++;
        value(depth + 1); ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === '}') { i++; return; }
        fail("expected ',' or '}' after a member's value, found " + found());
      }
    }
    if (c === '[') {
      i++; ws();
      if (text[i] === ']') { i++; return; }
      for (;;) {
        value(depth + 1); ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === ']') { i++; return; }
        fail("expected ',' or ']' after an element, found " + found());
      }
    }
    if (c === '"') return string();
    if (c === 't') return lit('true');
    if (c === 'f') return lit('false');
    if (c === 'n') return lit('null');
    return num();
  };
  try {
    value(0); ws();
    if (i < text.length) fail('the text goes on after the document ends, with ' + found());
    return null;
  } catch (e) {
    return { offset: e.offset, what: e.message };
  }
}

// syntaxMessage words the error JSON.parse threw for text for the person
// who typed it: where (line and column) and what is wrong, in the
// studio's words rather than the browser parser's. The caller says how to
// go on.
export function syntaxMessage(text, e) {
  const err = syntaxError(text);
  if (!err) return 'The JSON text is not valid: ' + String((e && e.message) || e).replace(/^SyntaxError: /, '');
  const before = text.slice(0, err.offset).split('\n');
  return 'The JSON text is not valid at line ' + before.length + ', column ' + (before[before.length - 1].length + 1) + ': ' + err.what;
}
