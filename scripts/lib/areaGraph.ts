/**
 * The area-level import graph: each src/services/<area>/ folder is one node, any other file its own
 * node. A loop is a strongly connected component of more than one node (Tarjan), reported with the
 * file imports that make its edges, so the one to cut can be read off.
 */
export interface AreaLoop {
  nodes: string[];
  /** `a -> b: file -> file` for each edge inside the loop (the first import of each). */
  edges: string[];
}

export function nodeOf(file: string): string {
  const p = file.split('/');
  return p[0] === 'src' && p[1] === 'services' && p.length > 3 ? `services/${p[2]}` : file;
}

export function areaLoops(imports: Record<string, string[]>): AreaLoop[] {
  const out = new Map<string, Map<string, string>>();
  for (const [f, deps] of Object.entries(imports)) {
    const a = nodeOf(f);
    for (const d of deps) {
      const b = nodeOf(d);
      if (a === b) continue;
      if (!out.has(a)) out.set(a, new Map());
      if (!out.get(a)!.has(b)) out.get(a)!.set(b, `${f} -> ${d}`);
    }
  }
  const nodes = new Set<string>([...out.keys(), ...[...out.values()].flatMap((m) => [...m.keys()])]);
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const sccs: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of out.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) sccs.push(scc.sort());
    }
  };
  for (const v of [...nodes].sort()) if (!index.has(v)) visit(v);
  return sccs.map((scc) => ({
    nodes: scc,
    edges: scc.flatMap((a) => [...(out.get(a) ?? [])].filter(([b]) => scc.includes(b)).map(([b, via]) => `${a} -> ${b}: ${via}`)),
  }));
}
