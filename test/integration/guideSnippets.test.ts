import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { buildWorkspace, registerAgent } from '../helpers/factories';
import { useTestApp, type TestApp } from '../helpers/harness';
import { createMetric, marketsOf, trader } from '../helpers/markets';

/**
 * Docs that paste (issue 28 item 8): every ```sh and ```bash block of every guide in docs/guides runs
 * with bash against this live instance, each guide's blocks in order in one shell session (as a
 * reader pastes them into one terminal), and every curl in them gets a 2xx.
 *
 * The convention (also at the top of docs/guides/overview.md): snippets use these variables, which
 * the reader sets and this test provides, fresh for each guide:
 *   BASE           the API base URL (http://localhost:3000/api)
 *   WS             a public workspace (its slug; an id works too)
 *   KEY            a participant's key: a Trader of $WS holding 1,000 credits
 *   ADMIN_KEY, OWNER_KEY   the key of $WS's owner (every capability; 100,000 credits)
 *   MASTER         the instance's master key (the platform operator)
 *   METRIC, SIGNUPS        the id of the metric "Signups" of $WS (value 420, range 0 to 1000)
 *   MARKET         the id of Signups' open book for 2026-11
 *   PROPOSAL       a pending proposal of $WS with branches on Signups
 *   AGENT          another participant of $WS (no credits)
 *   READ_ONLY_KEY  a second key of $KEY's participant with scope workspace:read only
 * The clock of the instance is 2026-11-15T12:00Z, so the guides' dates stay valid. Anything else a
 * snippet needs it makes itself (KEY=$(curl ... | jq -r .apiKey)).
 *
 * Markers, an HTML comment on the line right before the fence:
 *   <!-- snippet: expect 403 -->          every curl of the block answers 403 (a refusal shown on purpose)
 *   <!-- snippet: skip <reason> -->      the block is not run; the test prints it with the reason
 */

let app: TestApp;
useTestApp((a) => (app = a), { WEBHOOK_ALLOW_HTTP: '1' });

const ROOT = join(__dirname, '..', '..');
const GUIDES = join(ROOT, 'docs', 'guides');
/**
 * Guides whose snippets are being rewritten on another branch (issue 28): reported as skipped until
 * they carry the markers. Remove an entry once its guide's blocks pass.
 */
const PENDING: Record<string, string> = {};

interface Block {
  guide: string;
  line: number;
  code: string;
  expect: number | null;
  skip: string | null;
}

export function blocksOf(guide: string, text: string): Block[] {
  const out: Block[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(sh|bash)\s*$/.exec(lines[i]);
    if (!open) continue;
    const marker = /^<!--\s*snippet:\s*(expect|skip)\s*(.*?)\s*-->\s*$/.exec(lines[i - 1] ?? '');
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^```\s*$/.test(lines[j]); j++) body.push(lines[j]);
    out.push({
      guide,
      line: i + 1,
      code: body.join('\n'),
      expect: marker?.[1] === 'expect' ? Number(marker[2]) : null,
      skip: marker?.[1] === 'skip' ? marker[2] || 'no reason given' : null,
    });
    i = j;
  }
  return out;
}

const NOW = new Date('2026-11-15T12:00:00Z');

/** The variables of the convention, with fresh objects behind them. */
async function fixture(): Promise<Record<string, string>> {
  const owner = await registerAgent(app);
  const ws = await buildWorkspace(app, { owner, public: true, ownerCredits: 100_000 });
  const signups = await createMetric(app, ws, { name: 'Signups', value: 420, marketRangeMax: 1000 });
  const market = (await marketsOf(app, ws, signups.id)).find((m) => !m.proposalId && m.targetDate === '2026-11');
  if (!market) throw new Error('no 2026-11 book on Signups');
  const t = await trader(app, ws, 1_000);
  const other = await trader(app, ws, 0);
  const p = await app.http.post('/api/proposals').set('X-Agent-Key', owner.key).set('X-Workspace-Id', ws.id).send({ title: 'Referral program', metricIds: [signups.id] });
  if (p.status !== 200) throw new Error(`proposal: ${p.status} ${JSON.stringify(p.body)}`);
  const ro = await app.http.post(`/api/agents/${t.id}/keys`).set('X-Agent-Key', t.key).send({ label: 'read-only', scopes: ['workspace:read'] });
  if (ro.status !== 201) throw new Error(`key: ${ro.status} ${JSON.stringify(ro.body)}`);
  const { port } = app.server.address() as AddressInfo;
  return {
    BASE: `http://127.0.0.1:${port}/api`,
    WS: ws.slug,
    KEY: t.key,
    ADMIN_KEY: owner.key,
    OWNER_KEY: owner.key,
    MASTER: app.masterKey,
    METRIC: signups.id,
    SIGNUPS: signups.id,
    MARKET: market.id,
    PROPOSAL: p.body.id,
    AGENT: other.id,
    READ_ONLY_KEY: ro.body.apiKey,
  };
}

interface Run {
  exit: number | null;
  statuses: Map<number, number[]>;
  stdout: string;
  stderr: string;
}

/** One guide's runnable blocks in one bash session; every curl's status is logged per block. */
async function runGuide(blocks: Block[], env: Record<string, string>, cwd: string): Promise<Run> {
  const script = [
    'set -e -o pipefail',
    // Each curl also writes its status to stderr, tagged with its block (curl >= 7.63: %{stderr}).
    'curl() { command curl -w "%{stderr}SNIPPET_STATUS $SNIPPET_BLOCK %{http_code}\\n" "$@"; }',
    ...blocks.map((b, i) => `SNIPPET_BLOCK=${i}\n${b.code}\necho`),
  ].join('\n');
  // Asynchronous: the instance answers from this very process. Output goes to files, so a snippet
  // may write to /dev/stderr (a socket pair, as Node's pipes are, cannot be reopened by path).
  const outFile = join(cwd, '.stdout');
  const errFile = join(cwd, '.stderr');
  const [out, err] = [openSync(outFile, 'a'), openSync(errFile, 'a')];
  const status = await new Promise<number | null>((resolve) => {
    const child = spawn('bash', ['-c', script], {
      cwd,
      env: { PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH}`, HOME: cwd, npm_config_offline: 'true', ...env },
      stdio: ['ignore', out, err],
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
  closeSync(out);
  closeSync(err);
  const r = { status, stdout: readFileSync(outFile, 'utf8'), stderr: readFileSync(errFile, 'utf8') };
  const statuses = new Map<number, number[]>();
  for (const [, block, code] of r.stderr.matchAll(/^SNIPPET_STATUS (\d+) (\d{3})$/gm)) statuses.set(Number(block), [...(statuses.get(Number(block)) ?? []), Number(code)]);
  return { exit: r.status, statuses, stdout: r.stdout, stderr: r.stderr };
}

describe('the guides\' shell snippets', () => {
  beforeAll(() => app.clock.set(NOW));

  it('parses the markers', () => {
    const b = blocksOf('x', ['text', '<!-- snippet: expect 403 -->', '```sh', 'curl -s $BASE/x', '```', '```bash', 'echo hi', '```', '<!-- snippet: skip streams forever -->', '```sh', 'curl -N y', '```', '```json', '{}', '```'].join('\n'));
    expect(b.map((x) => [x.code, x.expect, x.skip])).toEqual([
      ['curl -s $BASE/x', 403, null],
      ['echo hi', null, null],
      ['curl -N y', null, 'streams forever'],
    ]);
  });

  it('every block of every guide runs: exit 0, every curl 2xx (or the status its marker expects)', async () => {
    // GUIDE_SNIPPETS=markets,credits runs only those guides (while editing them).
    const only = process.env.GUIDE_SNIPPETS?.split(',');
    const files = readdirSync(GUIDES).filter((f) => f.endsWith('.md') && (!only || only.includes(f.replace(/\.md$/, '')))).sort();
    mkdirSync(join(ROOT, '.data'), { recursive: true });
    const problems: string[] = [];
    const skipped: string[] = [];
    let ran = 0;
    let curls = 0;
    for (const file of files) {
      const guide = file.replace(/\.md$/, '');
      const blocks = blocksOf(guide, readFileSync(join(GUIDES, file), 'utf8'));
      if (!blocks.length) continue;
      if (PENDING[guide]) {
        for (const b of blocks) skipped.push(`${guide}.md:${b.line} (${PENDING[guide]})`);
        continue;
      }
      for (const b of blocks.filter((x) => x.skip)) skipped.push(`${guide}.md:${b.line} (${b.skip})`);
      const runnable = blocks.filter((x) => !x.skip);
      if (!runnable.length) continue;
      const cwd = mkdtempSync(join(ROOT, '.data', 'snippets-'));
      try {
        const r = await runGuide(runnable, await fixture(), cwd);
        ran += runnable.length;
        if (process.env.GUIDE_SNIPPETS_DEBUG) process.stdout.write(`${guide}: ${JSON.stringify([...r.statuses])}\n${r.stderr.slice(0, 3000)}\n`);
        if (r.exit !== 0) problems.push(`${guide}.md: bash exited ${r.exit}\n${r.stderr.split('\n').slice(-8).join('\n')}`);
        runnable.forEach((b, i) => {
          const got = r.statuses.get(i) ?? [];
          curls += got.length;
          const ok = b.expect === null ? got.every((s) => s >= 200 && s < 300) : got.length > 0 && got.every((s) => s === b.expect);
          if (!ok) problems.push(`${guide}.md:${b.line}: statuses ${got.join(', ') || 'none'}${b.expect ? ` (expected ${b.expect})` : ''}\n${r.stdout.slice(0, 1500)}`);
        });
      } finally {
        rmSync(cwd, { recursive: true, force: true });
      }
    }
    process.stdout.write(`guide snippets: ${ran} blocks run (${curls} curl calls), ${skipped.length} skipped:\n${skipped.map((s) => `  - ${s}`).join('\n')}\n`);
    expect(problems).toEqual([]);
    if (!only) expect(ran).toBeGreaterThan(30);
    // Skips stay few and named: the endless event stream, the onboarding claim, get-paid's four chain
    // blocks (walked by hand against npm run chain:dev, and by test/integration/chain-dev.test.ts), and a
    // connection's calls (needs an OAuth connection: test/integration/mcp.test.ts drives them).
    expect(skipped.length).toBeLessThanOrEqual(7);
  }, 300_000);
});
