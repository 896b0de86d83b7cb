import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { guideIndex } from '../../src/api/guides';
import { registerAgent } from '../helpers/factories';
import { useTestApp, type TestApp } from '../helpers/harness';

/**
 * Docs that paste (issue 28 item 8): every ```sh and ```bash block of every guide in docs/guides runs
 * with bash against this live instance, each guide's blocks in order in one shell session (as a
 * reader pastes them into one terminal), and every curl in them gets a 2xx.
 *
 * In catalog order (GET /api/guides), and the first guide first against an instance where nothing
 * was made for it (issue 56): overview gets only BASE and MASTER (the operator's master key) and
 * makes the rest itself (an owner, its credits, a workspace, a metric, a trader with credits, a
 * trade). The variables it ends with are the convention every later guide starts from (also in
 * docs/guides/overview.md):
 *   BASE           the API base URL (http://localhost:3000/api)
 *   WS             overview's public workspace (its slug; an id works too)
 *   KEY            overview's trader (a Trader of $WS; 1,000 credits from the owner, 10 traded)
 *   ADMIN_KEY, OWNER_KEY   the key of $WS's owner (every capability; 10,000 credits from the operator)
 *   MASTER         the instance's master key (the platform operator)
 *   METRIC, SIGNUPS        the id of overview's metric "Signups" (value 420, range 0 to 1000)
 *   MARKET         the id of Signups' first listed book
 * and, made here on overview's workspace as a reader who followed the guides has them:
 *   PROPOSAL       a pending proposal of $WS with branches on Signups
 *   AGENT          another participant of $WS (no credits)
 *   READ_ONLY_KEY  a second key of $KEY's participant with scope workspace:read only
 * Each later guide runs in its own session from those variables (what one guide reassigns does not
 * reach the next). The clock of the instance is 2026-11-15T12:00Z, so the guides' dates stay valid.
 * Anything else a snippet needs it makes itself (KEY=$(curl ... | jq -r .apiKey)).
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

/** The variables overview ends with (the convention every later guide starts from). */
const CARRIED = ['BASE', 'WS', 'KEY', 'ADMIN_KEY', 'OWNER_KEY', 'MASTER', 'METRIC', 'SIGNUPS', 'MARKET'] as const;

/** What the first guide gets: the base URL and the operator's master key, nothing made. */
function freshInstance(): Record<string, string> {
  const { port } = app.server.address() as AddressInfo;
  return { BASE: `http://127.0.0.1:${port}/api`, MASTER: app.masterKey };
}

/** The rest of the convention, made on overview's workspace: a proposal, another member, a read-only key. */
async function afterOverview(vars: Record<string, string>): Promise<Record<string, string>> {
  const missing = CARRIED.filter((v) => !vars[v]);
  if (missing.length) throw new Error(`overview's session did not set ${missing.join(', ')}`);
  const as = (key: string) => ({ 'X-Agent-Key': key, 'X-Workspace-Id': vars.WS });
  const p = await app.http.post('/api/proposals').set(as(vars.OWNER_KEY)).send({ title: 'Referral program', metricIds: [vars.SIGNUPS] });
  if (p.status !== 200) throw new Error(`proposal: ${p.status} ${JSON.stringify(p.body)}`);
  const other = await registerAgent(app);
  const joined = await app.http.post(`/api/marketplace/${vars.WS}/join`).set('X-Agent-Key', other.key);
  if (joined.status !== 200) throw new Error(`join: ${joined.status} ${JSON.stringify(joined.body)}`);
  const me = await app.http.get('/api/agents/me').set('X-Agent-Key', vars.KEY);
  const ro = await app.http.post(`/api/agents/${me.body.id}/keys`).set('X-Agent-Key', vars.KEY).send({ label: 'read-only', scopes: ['workspace:read'] });
  if (ro.status !== 201) throw new Error(`key: ${ro.status} ${JSON.stringify(ro.body)}`);
  return { ...vars, PROPOSAL: p.body.id, AGENT: other.id, READ_ONLY_KEY: ro.body.apiKey };
}

interface Run {
  exit: number | null;
  statuses: Map<number, number[]>;
  stdout: string;
  stderr: string;
  /** The convention's variables as the session ended. */
  vars: Record<string, string>;
}

/** One guide's runnable blocks in one bash session; every curl's status is logged per block. */
async function runGuide(blocks: Block[], env: Record<string, string>, cwd: string): Promise<Run> {
  const script = [
    'set -e -o pipefail',
    // The session's variables as it ends (overview's become the next guides' starting point).
    `trap 'for v in ${CARRIED.join(' ')}; do printf "%s=%s\\n" "$v" "\${!v}"; done > ${join(cwd, '.vars')}' EXIT`,
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
  const vars = Object.fromEntries(
    (existsSync(join(cwd, '.vars')) ? readFileSync(join(cwd, '.vars'), 'utf8') : '')
      .split('\n')
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)])
      .filter(([k, v]) => k && v),
  );
  const statuses = new Map<number, number[]>();
  for (const [, block, code] of r.stderr.matchAll(/^SNIPPET_STATUS (\d+) (\d{3})$/gm)) statuses.set(Number(block), [...(statuses.get(Number(block)) ?? []), Number(code)]);
  return { exit: r.status, statuses, stdout: r.stdout, stderr: r.stderr, vars };
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

  it('every block of every guide runs in catalog order, the first on a fresh instance: exit 0, every curl 2xx (or the status its marker expects)', async () => {
    // GUIDE_SNIPPETS=markets,credits runs only those guides (after overview, which makes their variables).
    const only = process.env.GUIDE_SNIPPETS?.split(',');
    const order = guideIndex().map((g) => `${g.id}.md`);
    const onDisk = readdirSync(GUIDES).filter((f) => f.endsWith('.md'));
    expect(onDisk.filter((f) => !order.includes(f))).toEqual([]); // every guide is in the catalog
    expect(order[0]).toBe('overview.md');
    const files = order.filter((f) => onDisk.includes(f) && (f === 'overview.md' || !only || only.includes(f.replace(/\.md$/, ''))));
    let env: Record<string, string> | null = null;
    // Inside the test package (test/.data, ignored by git): npx there finds its tools (build-agent's
    // openapi-typescript) in test/node_modules, offline, as a reader's npx finds them in its project.
    mkdirSync(join(ROOT, 'test', '.data'), { recursive: true });
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
      const cwd = mkdtempSync(join(ROOT, 'test', '.data', 'snippets-'));
      try {
        const r = await runGuide(runnable, env ?? freshInstance(), cwd);
        if (!env) env = await afterOverview(r.vars);
        ran += runnable.length;
        if (process.env.GUIDE_SNIPPETS_DEBUG) process.stdout.write(`${guide}: ${JSON.stringify([...r.statuses])}\n${r.stdout.slice(0, 3000)}\n${r.stderr.slice(0, 3000)}\n`);
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
    // connection's calls (needs an OAuth connection: test/integration/mcp.test.ts drives them), and a
    // repository source's tree (needs a repository host: test/integration/sources.test.ts drives the
    // bridge against a local fixture of GitHub's API).
    expect(skipped.length).toBeLessThanOrEqual(8);
  }, 300_000);
});
