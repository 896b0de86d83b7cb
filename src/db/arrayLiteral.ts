/**
 * A JS array as a Postgres array literal, for the hot statements' unnest parameters (db/prepared.ts).
 * node-postgres encodes an array by quoting and escaping every element with two regular expressions,
 * which was 4% of the server's main thread at 8 traders (a lane batch sends about 45 arrays; issue 29
 * step 27). Here an element that needs no quotes (uuids, numbers, codes, timestamps' ISO text) goes
 * as it is, and only one test decides. Arrays of what is neither a string, a number, a bigint, a
 * boolean nor null (dates, objects, buffers, nested arrays) return null: node-postgres encodes them.
 */

/** Characters an unquoted element may hold: none of array_in's delimiters, quotes, backslashes or spaces. */
const PLAIN = /^[\w.:+\-@/]+$/;
const NULL_WORD = /^null$/i;

function quoted(s: string): string {
  return `"${s.replace(/[\\"]/g, '\\$&')}"`;
}

export function arrayLiteral(values: readonly unknown[]): string | null {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) out += ',';
    if (v === null || v === undefined) out += 'NULL';
    else if (typeof v === 'string') out += PLAIN.test(v) && !NULL_WORD.test(v) ? v : quoted(v);
    else if (typeof v === 'number' || typeof v === 'bigint') out += String(v);
    else if (typeof v === 'boolean') out += v ? 'true' : 'false';
    else return null;
  }
  return `${out}}`;
}

/** A statement's parameters with each array this module can encode replaced by its literal. */
export function encodeArrays(values: readonly unknown[]): unknown[] {
  return values.map((v) => (Array.isArray(v) ? (arrayLiteral(v) ?? v) : v));
}
