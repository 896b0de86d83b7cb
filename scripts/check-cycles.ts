/**
 * Fails on any import cycle in src/, jobs/ and workers/ (run by .ci/run after lint). Areas call
 * back into an area that imports them only through services/wiring; see docs/architecture.md.
 */
import madge from 'madge';

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
    process.exit(1);
  }
  console.log(`no import cycles (${Object.keys(res.obj()).length} files)`);
}

main().catch((err: Error) => {
  console.error(err.message);
  process.exit(1);
});
