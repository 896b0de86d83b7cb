import { DomainError } from '../errors';
import { checkReferences, CycleError, dependencyOrder, evaluate, FormulaError, parseFormula, references, renameReference, type Expr, type Node } from './formula';

export interface GraphNode {
  id: string;
  name: string;
  value: number;
  formula: string;
  expr: Expr;
  deps: string[];
  total: number | null;
  formulaError: string | null;
  depth: number;
  isLeaf: boolean;
}

// Formulas are parsed on every write of a large workspace; the parse of a text never changes.
const parseCache = new Map<string, Expr | FormulaError>();
export function parseCached(text: string): Expr {
  let hit = parseCache.get(text);
  if (!hit) {
    try {
      hit = parseFormula(text);
    } catch (err) {
      if (!(err instanceof FormulaError)) throw err;
      hit = err;
    }
    if (parseCache.size >= 20_000) parseCache.clear();
    parseCache.set(text, hit);
  }
  if (hit instanceof FormulaError) throw hit;
  return hit;
}

/** One workspace's metrics as a dependency graph: names, formulas, totals, and the checks on them. */
export class MetricGraph {
  readonly nodes = new Map<string, GraphNode>();
  private readonly byName = new Map<string, string>();

  constructor(rows: ReadonlyArray<Omit<GraphNode, 'expr' | 'deps'>>) {
    for (const r of rows) {
      this.byName.set(r.name.toLowerCase(), r.id);
      let expr: Expr;
      try {
        expr = parseCached(r.formula);
      } catch {
        expr = { kind: 'num', value: NaN }; // a stored formula always parsed when written
      }
      this.nodes.set(r.id, { ...r, expr, deps: [] });
    }
    for (const n of this.nodes.values()) n.deps = this.idsOf(references(n.expr));
  }

  idByName(name: string): string | undefined {
    return this.byName.get(name.toLowerCase());
  }

  private idsOf(names: string[]): string[] {
    return [...new Set(names.map((n) => this.idByName(n)).filter((id): id is string => id !== undefined))];
  }

  add(node: GraphNode): void {
    this.nodes.set(node.id, node);
    this.byName.set(node.name.toLowerCase(), node.id);
  }

  remove(id: string): void {
    const n = this.nodes.get(id);
    if (!n) return;
    this.nodes.delete(id);
    this.byName.delete(n.name.toLowerCase());
  }

  rename(id: string, to: string): void {
    const n = this.nodes.get(id)!;
    this.byName.delete(n.name.toLowerCase());
    n.name = to;
    this.byName.set(to.toLowerCase(), id);
  }

  forward(): Node[] {
    return [...this.nodes.values()].map((n) => ({ id: n.id, dependsOn: n.deps }));
  }

  /** Who references each metric: depth counts layers of these. */
  reversed(): Node[] {
    const users = new Map<string, string[]>();
    for (const n of this.nodes.values()) {
      for (const d of n.deps) {
        const list = users.get(d);
        if (list) list.push(n.id);
        else users.set(d, [n.id]);
      }
    }
    return [...this.nodes.keys()].map((id) => ({ id, dependsOn: users.get(id) ?? [] }));
  }

  usersOf(id: string): GraphNode[] {
    return [...this.nodes.values()].filter((n) => n.id !== id && n.deps.includes(id));
  }

  /**
   * Parse and check a formula for metric `self` (which may not be in the graph yet): 400 on a
   * syntax error or an unknown reference, with references rewritten to the metrics' exact names
   * so a later rename finds them.
   */
  compile(text: string, self: { id: string; name: string }): { text: string; expr: Expr; deps: string[] } {
    let expr: Expr;
    try {
      expr = parseCached(text);
      checkReferences(expr, (n) => n.toLowerCase() === self.name.toLowerCase() || this.byName.has(n.toLowerCase()), text);
    } catch (err) {
      if (err instanceof FormulaError) throw new DomainError('formula_invalid', `Invalid formula: ${err.message}`, { position: err.position });
      throw err;
    }
    let canonical = text.trim() === '' ? '0' : text.trim();
    const deps: string[] = [];
    for (const ref of references(expr)) {
      const isSelf = ref.toLowerCase() === self.name.toLowerCase();
      const id = isSelf ? self.id : this.byName.get(ref.toLowerCase())!;
      const exact = isSelf ? self.name : this.nodes.get(id)!.name;
      if (ref !== exact) canonical = renameReference(canonical, ref, exact);
      if (!deps.includes(id)) deps.push(id);
    }
    if (canonical !== text) expr = parseCached(canonical);
    return { text: canonical, expr, deps };
  }

  /** 400 formula_cycle, naming the metrics around the loop, if the graph has a cycle. */
  assertAcyclic(): void {
    try {
      dependencyOrder(this.forward());
    } catch (err) {
      if (!(err instanceof CycleError)) throw err;
      const names = err.cycle.map((id) => this.nodes.get(id)?.name ?? id);
      throw new DomainError('formula_cycle', `The formula would make metrics depend on themselves: ${[...names, names[0]].map((n) => `{${n}}`).join(' → ')}.`, {
        cycle: names,
      });
    }
  }

  evaluateNode(n: GraphNode): { total: number | null; error: string | null } {
    for (const d of n.deps) {
      const dep = this.nodes.get(d);
      if (dep && dep.total === null) return { total: null, error: `{${dep.name}} has no finite total, so this formula cannot be computed.` };
    }
    const result = evaluate(n.expr, (name) => {
      const id = this.byName.get(name.toLowerCase());
      return id === undefined ? NaN : (this.nodes.get(id)!.total ?? NaN);
    });
    const total = n.value + result;
    if (!Number.isFinite(total)) {
      return { total: null, error: 'The formula result is not a finite number (a division by zero, the square root of a negative number, or an overflow).' };
    }
    return { total, error: null };
  }
}
