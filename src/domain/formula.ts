// Formula language for computed metrics: parse, print, evaluate, and order dependencies.
// Pure module: no I/O, no eval, no dependencies.

export type Expr =
  | { kind: 'num'; value: number }
  | { kind: 'ref'; name: string }
  | { kind: 'neg'; arg: Expr }
  | { kind: 'bin'; op: '+' | '-' | '*' | '/'; left: Expr; right: Expr }
  | { kind: 'call'; fn: 'sqrt' | 'abs' | 'min' | 'max' | 'pow'; args: Expr[] };

export type FunctionName = Extract<Expr, { kind: 'call' }>['fn'];
export type BinaryOp = Extract<Expr, { kind: 'bin' }>['op'];

/** Syntax or reference error; `position` is a 0-based UTF-16 offset into the formula text. */
export class FormulaError extends Error {
  readonly position: number;
  constructor(message: string, position: number) {
    super(message);
    this.name = 'FormulaError';
    this.position = position;
  }
}

export const DEFAULT_FORMULA = '0';

// Limits keep every recursive walk (parse, print, evaluate) far from the JS stack limit.
export const MAX_NESTING = 256;
export const MAX_TREE_HEIGHT = 1000;

const ARITY: Record<FunctionName, { min: number; max: number }> = {
  sqrt: { min: 1, max: 1 },
  abs: { min: 1, max: 1 },
  pow: { min: 2, max: 2 },
  min: { min: 1, max: Infinity },
  max: { min: 1, max: Infinity },
};

function isFunctionName(s: string): s is FunctionName {
  return Object.prototype.hasOwnProperty.call(ARITY, s);
}

// ---------------------------------------------------------------------------
// Lexer

type Token =
  | { kind: 'num'; start: number; text: string; value: number }
  | { kind: 'ref'; start: number; name: string }
  | { kind: 'ident'; start: number; name: string }
  | { kind: 'punct'; start: number; ch: '+' | '-' | '*' | '/' | '(' | ')' | ',' }
  | { kind: 'eof'; start: number };

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const isSpace = (c: string): boolean => /\s/.test(c);
const isIdentStart = (c: string | undefined): boolean => c !== undefined && /[A-Za-z_]/.test(c);
const isIdentPart = (c: string | undefined): boolean => c !== undefined && /[A-Za-z0-9_]/.test(c);

function describeToken(t: Token): string {
  switch (t.kind) {
    case 'num':
      return `number ${t.text}`;
    case 'ref':
      return `reference {${t.name}}`;
    case 'ident':
      return `name '${t.name}'`;
    case 'punct':
      return `'${t.ch}'`;
    case 'eof':
      return 'end of formula';
  }
}

/** A `{...}` span in formula text, found without parsing so it also works on broken formulas. */
export interface ReferenceSpan {
  name: string; // trimmed
  start: number; // offset of '{'
  end: number; // offset just past '}'
}

export function referenceSpans(text: string): ReferenceSpan[] {
  const spans: ReferenceSpan[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] !== '{') {
      i++;
      continue;
    }
    let j = i + 1;
    while (j < text.length && text[j] !== '{' && text[j] !== '}') j++;
    if (text[j] === '}') {
      spans.push({ name: text.slice(i + 1, j).trim(), start: i, end: j + 1 });
      i = j + 1;
    } else {
      i = j; // unclosed: resume at the next '{' (or the end)
    }
  }
  return spans;
}

// ---------------------------------------------------------------------------
// Parser (recursive descent, lazily lexed so the leftmost error is the one reported)
//
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '/') unary)*
//   unary   := ('-' | '+') unary | primary
//   primary := number | '{' name '}' | fn '(' args? ')' | '(' expr ')'

class Parser {
  private cursor = 0;
  private tok: Token;
  private nesting = 0;
  // Tree heights live beside the tree so parsed nodes stay plain data.
  private readonly heights = new WeakMap<Expr, number>();

  constructor(private readonly text: string) {
    this.tok = this.lex();
  }

  parse(): Expr {
    const e = this.parseExpr();
    if (this.tok.kind !== 'eof') throw this.unexpected(this.tok);
    return e;
  }

  private fail(message: string, position: number): FormulaError {
    return new FormulaError(`${message} at position ${position}.`, position);
  }

  private unexpected(t: Token): FormulaError {
    return this.fail(`Unexpected ${describeToken(t)}`, t.start);
  }

  private lex(): Token {
    const s = this.text;
    let i = this.cursor;
    while (i < s.length && isSpace(s[i])) i++;
    const start = i;
    if (i >= s.length) {
      this.cursor = i;
      return { kind: 'eof', start };
    }
    const c = s[i];

    if (isDigit(c) || (c === '.' && isDigit(s[i + 1]))) {
      while (isDigit(s[i])) i++;
      if (s[i] === '.') {
        i++;
        while (isDigit(s[i])) i++;
      }
      // Only take 'e' as an exponent when digits follow, so "2e" reports the stray 'e'.
      if (s[i] === 'e' || s[i] === 'E') {
        let k = i + 1;
        if (s[k] === '+' || s[k] === '-') k++;
        if (isDigit(s[k])) {
          while (isDigit(s[k])) k++;
          i = k;
        }
      }
      const text = s.slice(start, i);
      const value = Number(text);
      if (!Number.isFinite(value)) throw this.fail(`Number ${text} is too large`, start);
      this.cursor = i;
      return { kind: 'num', start, text, value };
    }

    if (c === '{') {
      let j = i + 1;
      while (j < s.length && s[j] !== '{' && s[j] !== '}') j++;
      if (s[j] !== '}') throw this.fail("Unclosed '{'", start);
      const name = s.slice(i + 1, j).trim();
      if (name === '') throw this.fail('Empty metric reference', start);
      this.cursor = j + 1;
      return { kind: 'ref', start, name };
    }

    if (c === '}') throw this.fail("Unexpected '}'", start);

    if (isIdentStart(c)) {
      while (isIdentPart(s[i])) i++;
      this.cursor = i;
      return { kind: 'ident', start, name: s.slice(start, i) };
    }

    if (c === '+' || c === '-' || c === '*' || c === '/' || c === '(' || c === ')' || c === ',') {
      this.cursor = i + 1;
      return { kind: 'punct', start, ch: c };
    }

    const ch = String.fromCodePoint(s.codePointAt(i) ?? 0);
    throw this.fail(`Unexpected character '${ch}'`, start);
  }

  private advance(): void {
    this.tok = this.lex();
  }

  private isPunct(ch: string): boolean {
    return this.tok.kind === 'punct' && this.tok.ch === ch;
  }

  private enter(at: number): void {
    if (++this.nesting > MAX_NESTING) throw this.fail('Formula is nested too deeply', at);
  }

  private leave(): void {
    this.nesting--;
  }

  private height(e: Expr): number {
    return this.heights.get(e) ?? 1;
  }

  private node(e: Expr, children: Expr[], at: number): Expr {
    let h = 0;
    for (const c of children) h = Math.max(h, this.height(c));
    if (h + 1 > MAX_TREE_HEIGHT) throw this.fail('Formula is nested too deeply', at);
    this.heights.set(e, h + 1);
    return e;
  }

  private expectClose(open: number): void {
    if (this.isPunct(')')) {
      this.advance();
      return;
    }
    if (this.tok.kind === 'eof') throw this.fail("Unclosed '('", open);
    throw this.unexpected(this.tok);
  }

  private parseExpr(): Expr {
    let left = this.parseTerm();
    while (this.tok.kind === 'punct' && (this.tok.ch === '+' || this.tok.ch === '-')) {
      const { ch: op, start } = this.tok;
      this.advance();
      const right = this.parseTerm();
      left = this.node({ kind: 'bin', op, left, right }, [left, right], start);
    }
    return left;
  }

  private parseTerm(): Expr {
    let left = this.parseUnary();
    while (this.tok.kind === 'punct' && (this.tok.ch === '*' || this.tok.ch === '/')) {
      const { ch: op, start } = this.tok;
      this.advance();
      const right = this.parseUnary();
      left = this.node({ kind: 'bin', op, left, right }, [left, right], start);
    }
    return left;
  }

  private parseUnary(): Expr {
    if (this.tok.kind === 'punct' && (this.tok.ch === '-' || this.tok.ch === '+')) {
      const { ch, start } = this.tok;
      this.enter(start);
      this.advance();
      const arg = this.parseUnary();
      this.leave();
      // Unary plus is a no-op, so it leaves no node (keeps printing canonical).
      return ch === '+' ? arg : this.node({ kind: 'neg', arg }, [arg], start);
    }
    return this.parsePrimary();
  }

  private parsePrimary(): Expr {
    const t = this.tok;
    switch (t.kind) {
      case 'num':
        this.advance();
        return { kind: 'num', value: t.value };
      case 'ref':
        this.advance();
        return { kind: 'ref', name: t.name };
      case 'ident':
        return this.parseCall(t);
      case 'punct':
        if (t.ch === '(') {
          this.enter(t.start);
          this.advance();
          const e = this.parseExpr();
          this.expectClose(t.start);
          this.leave();
          return e;
        }
        throw this.unexpected(t);
      case 'eof':
        throw this.fail('Unexpected end of formula', t.start);
    }
  }

  private parseCall(t: Extract<Token, { kind: 'ident' }>): Expr {
    this.advance();
    const fn = t.name.toLowerCase();
    if (!this.isPunct('(')) {
      if (isFunctionName(fn)) throw this.fail(`Expected '(' after ${fn}`, this.tok.start);
      // Bare words are almost always a metric name missing its braces.
      throw this.fail(`Unexpected name '${t.name}' (write metric names in braces, e.g. {${t.name}})`, t.start);
    }
    if (!isFunctionName(fn)) throw this.fail(`Unknown function '${t.name}'`, t.start);
    const open = this.tok.start;
    this.enter(open);
    this.advance();
    const args: Expr[] = [];
    if (!this.isPunct(')')) {
      args.push(this.parseExpr());
      while (this.isPunct(',')) {
        this.advance();
        args.push(this.parseExpr());
      }
    }
    this.expectClose(open);
    this.leave();
    const { min, max } = ARITY[fn];
    if (args.length < min || args.length > max) {
      const expected = min === max ? `exactly ${min}` : `at least ${min}`;
      const noun = min === 1 ? 'argument' : 'arguments';
      throw this.fail(`Function ${fn} expects ${expected} ${noun} but got ${args.length}`, t.start);
    }
    return this.node({ kind: 'call', fn, args }, args, t.start);
  }
}

/** Parses formula text; blank text means the default formula '0'. Throws only FormulaError. */
export function parseFormula(text: string): Expr {
  if (text.trim() === '') return { kind: 'num', value: 0 };
  return new Parser(text).parse();
}

// ---------------------------------------------------------------------------
// Printer

const PREC = { add: 1, mul: 2, neg: 3, atom: 4 } as const;

function precOf(e: Expr): number {
  switch (e.kind) {
    case 'bin':
      return e.op === '+' || e.op === '-' ? PREC.add : PREC.mul;
    case 'neg':
      return PREC.neg;
    case 'num':
      // A negative literal prints as a negation, so it needs the same care.
      return e.value < 0 || Object.is(e.value, -0) ? PREC.neg : PREC.atom;
    default:
      return PREC.atom;
  }
}

function wrap(e: Expr, parens: boolean): string {
  const s = printFormula(e);
  return parens ? `(${s})` : s;
}

/**
 * Canonical text with minimal parentheses. Round-trips exactly for trees parseFormula
 * can produce (non-negative finite literals, trimmed brace-free names).
 */
export function printFormula(e: Expr): string {
  switch (e.kind) {
    case 'num': {
      if (!Number.isFinite(e.value)) throw new RangeError(`Cannot print non-finite number ${e.value}.`);
      const negative = e.value < 0 || Object.is(e.value, -0);
      return negative ? `-${String(-e.value)}` : String(e.value);
    }
    case 'ref':
      if (/[{}]/.test(e.name) || e.name.trim() === '') {
        throw new RangeError(`Invalid metric name ${JSON.stringify(e.name)}.`);
      }
      return `{${e.name}}`;
    case 'neg':
      return `-${wrap(e.arg, precOf(e.arg) < PREC.neg)}`;
    case 'bin': {
      const p = precOf(e);
      // Left-associative: an equal-precedence right operand needs parentheses.
      return `${wrap(e.left, precOf(e.left) < p)} ${e.op} ${wrap(e.right, precOf(e.right) <= p)}`;
    }
    case 'call':
      return `${e.fn}(${e.args.map((a) => printFormula(a)).join(', ')})`;
  }
}

// ---------------------------------------------------------------------------
// Analysis and evaluation

/** Unique referenced names, in first-appearance (source) order. */
export function references(e: Expr): string[] {
  const seen = new Set<string>();
  const walk = (x: Expr): void => {
    switch (x.kind) {
      case 'ref':
        seen.add(x.name);
        return;
      case 'neg':
        walk(x.arg);
        return;
      case 'bin':
        walk(x.left);
        walk(x.right);
        return;
      case 'call':
        x.args.forEach(walk);
        return;
      case 'num':
        return;
    }
  };
  walk(e);
  return [...seen];
}

/** Plain IEEE arithmetic: division by zero or sqrt(-1) yields Infinity/NaN, never a throw. */
export function evaluate(e: Expr, lookup: (name: string) => number): number {
  switch (e.kind) {
    case 'num':
      return e.value;
    case 'ref':
      return lookup(e.name);
    case 'neg':
      return -evaluate(e.arg, lookup);
    case 'bin':
      return applyBinary(e.op, evaluate(e.left, lookup), evaluate(e.right, lookup));
    case 'call':
      return applyFunction(e.fn, e.args.map((a) => evaluate(a, lookup)));
  }
}

function applyBinary(op: BinaryOp, a: number, b: number): number {
  switch (op) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      return a / b;
  }
}

function applyFunction(fn: FunctionName, args: number[]): number {
  switch (fn) {
    case 'sqrt':
      return Math.sqrt(args[0]);
    case 'abs':
      return Math.abs(args[0]);
    // reduce, not spread: a very wide min(...) must not hit the engine's argument limit
    case 'min':
      return args.reduce((m, x) => Math.min(m, x));
    case 'max':
      return args.reduce((m, x) => Math.max(m, x));
    case 'pow':
      return Math.pow(args[0], args[1]);
  }
}

/** Rewrites every {from} to {to}, keeping whitespace inside the braces and all other bytes. */
export function renameReference(text: string, from: string, to: string): string {
  if (/[{}]/.test(to) || to.trim() === '') {
    throw new RangeError(`Invalid metric name ${JSON.stringify(to)}.`);
  }
  const target = from.trim();
  let out = '';
  let last = 0;
  for (const span of referenceSpans(text)) {
    if (span.name !== target) continue;
    const inner = text.slice(span.start + 1, span.end - 1);
    const lead = inner.length - inner.trimStart().length;
    const trail = inner.length - inner.trimEnd().length;
    out += text.slice(last, span.start + 1 + lead) + to;
    last = span.end - 1 - trail;
  }
  return out + text.slice(last);
}

/** Throws FormulaError at the first (leftmost in `text`) reference that `known` rejects. */
export function checkReferences(e: Expr, known: (name: string) => boolean, text: string): void {
  const unknown = new Set(references(e).filter((n) => !known(n)));
  if (unknown.size === 0) return;
  const span = referenceSpans(text).find((s) => unknown.has(s.name));
  // Without a matching span `e` did not come from `text`; fall back to the start.
  const name = span ? span.name : [...unknown][0];
  const position = span ? span.start : 0;
  throw new FormulaError(`Unknown metric {${name}} at position ${position}.`, position);
}

// ---------------------------------------------------------------------------
// Dependency graph

export interface Node {
  id: string;
  dependsOn: string[]; // ids this node's formula references
}

export class CycleError extends Error {
  /** Ids around the cycle; each depends on the next, and the last on the first. */
  readonly cycle: string[];
  constructor(cycle: string[]) {
    super(`Circular dependency: ${[...cycle, cycle[0]].join(' → ')}.`);
    this.name = 'CycleError';
    this.cycle = cycle;
  }
}

/**
 * Topological order (Kahn's algorithm, iterative, O(n + e)): each node comes after every
 * node it depends on; ties keep input order. Ids in dependsOn that are not nodes are ignored.
 */
export function dependencyOrder(nodes: Node[]): string[] {
  const byId = new Map<string, Node>();
  for (const n of nodes) {
    if (byId.has(n.id)) throw new Error(`Duplicate node id ${JSON.stringify(n.id)}.`);
    byId.set(n.id, n);
  }
  const pending = new Map<string, number>(); // unprocessed dependency edges per node
  const users = new Map<string, string[]>(); // dep id -> ids that depend on it
  for (const n of nodes) {
    let count = 0;
    for (const d of n.dependsOn) {
      if (!byId.has(d)) continue;
      count++;
      const list = users.get(d);
      if (list) list.push(n.id);
      else users.set(d, [n.id]);
    }
    pending.set(n.id, count);
  }
  const order: string[] = [];
  for (const n of nodes) if (pending.get(n.id) === 0) order.push(n.id);
  for (let i = 0; i < order.length; i++) {
    for (const u of users.get(order[i]) ?? []) {
      const left = (pending.get(u) ?? 0) - 1;
      pending.set(u, left);
      if (left === 0) order.push(u);
    }
  }
  if (order.length < nodes.length) throw new CycleError(findCycle(nodes, byId, pending));
  return order;
}

// Every unordered node still has an unordered dependency, so walking those must loop.
function findCycle(nodes: Node[], byId: Map<string, Node>, pending: Map<string, number>): string[] {
  const stuck = (id: string): boolean => (pending.get(id) ?? 0) > 0;
  const start = nodes.find((n) => stuck(n.id));
  if (!start) return [];
  const indexOnPath = new Map<string, number>();
  const path: string[] = [];
  let id = start.id;
  while (!indexOnPath.has(id)) {
    indexOnPath.set(id, path.length);
    path.push(id);
    const next = byId.get(id)!.dependsOn.find((d) => byId.has(d) && stuck(d));
    id = next!;
  }
  return path.slice(indexOnPath.get(id));
}

/**
 * Ids that transitively depend on `changed` (which need not be a node itself), in
 * dependency order. `changed` is included only if it depends on itself via a cycle,
 * in which case CycleError is thrown.
 */
export function dependents(nodes: Node[], changed: string): string[] {
  const users = new Map<string, string[]>();
  for (const n of nodes) {
    for (const d of new Set(n.dependsOn)) {
      const list = users.get(d);
      if (list) list.push(n.id);
      else users.set(d, [n.id]);
    }
  }
  const affected = new Set<string>();
  const queue = [changed];
  for (let i = 0; i < queue.length; i++) {
    for (const u of users.get(queue[i]) ?? []) {
      if (!affected.has(u)) {
        affected.add(u);
        queue.push(u);
      }
    }
  }
  return dependencyOrder(nodes.filter((n) => affected.has(n.id)));
}

// Depth = longest dependency chain below a node: 0 if its formula references nothing, else 1 + max depth of what it references (ids that are not nodes count as 0).
export function depths(nodes: Node[]): Map<string, number> {
  const byId = new Map(nodes.map((n) => [n.id, n] as const));
  const depth = new Map<string, number>();
  for (const id of dependencyOrder(nodes)) {
    let d = 0;
    for (const dep of byId.get(id)!.dependsOn) d = Math.max(d, 1 + (depth.get(dep) ?? 0));
    depth.set(id, d);
  }
  return depth;
}
