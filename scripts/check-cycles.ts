/**
 * Fails on any import cycle in src/, jobs/ and workers/ (run by .ci/run after lint), at two levels:
 * - files: madge's cycles;
 * - areas: every folder src/services/<area>/ is one node, every other file its own node, and a loop
 *   between nodes (credits -> participants -> templates -> ... -> credits) fails even where no
 *   file-level cycle closes it. Areas call back into an area that imports them only through
 *   services/wiring; shared request helpers live in leaf areas (idempotency) or neutral files. See
 *   docs/architecture.md.
 */
import madge from 'madge';
import { areaLoops } from './lib/areaGraph';

/** Cycles that may stay, each with the reason. Keys are the cycle's files joined by " > ". */
const ALLOWED: Record<string, string> = {
  // TypeORM relations name each other's class lazily (`() => Workspace`): the pair is one model, and
  // the import is read only when TypeORM builds its metadata, after both modules loaded.
  'src/entities/agent.ts > src/entities/workspace.ts': 'TypeORM relation pair (lazy class references)',
};

async function main(): Promise<void> {
  const res = await madge(['src', 'jobs', 'workers'], { fileExtensions: ['ts'], tsConfig: 'tsconfig.json', baseDir: process.cwd() });
  const cycles = res.circular().map((c) => c.join(' > '));
  const bad = cycles.filter((c) => !(c in ALLOWED));
  for (const c of cycles) if (c in ALLOWED) console.log(`allowed cycle: ${c} (${ALLOWED[c]})`);
  if (bad.length) {
    console.error(`${bad.length} import cycle(s): route the call back through services/wiring or move the shared part into one area both import.`);
    for (const c of bad) console.error(`  ${c}`);
  }
  // A loop of plain files is a file cycle, reported (or allowed) above.
  const loops = areaLoops(res.obj()).filter((l) => l.nodes.some((n) => n.startsWith('services/')));
  if (loops.length) {
    console.error(`${loops.length} loop(s) between areas: route the call back through services/wiring, or move the shared part into a leaf area both import.`);
    for (const l of loops) {
      console.error(`  ${l.nodes.join(', ')}`);
      for (const e of l.edges) console.error(`    ${e}`);
    }
  }
  if (bad.length || loops.length) process.exit(1);
  console.log(`no import cycles (${Object.keys(res.obj()).length} files), no loop between areas`);
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
