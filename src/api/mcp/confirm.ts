import type { Tool } from './tools';

/**
 * What the person reads before a tool acts (issue 55): names and dates instead of ids, the direction,
 * the cost in credits, the shares and the consensus before and after, the subsidy per book. The
 * figures come from the dry run of the very request the tool is about to send.
 */

/**
 * A read of a route (its registry path, `/metrics/:id`, with its parameters) as the connection, in
 * process; a body makes it the POST of a dry run. A refusal answers its status: the sentence then shows the id.
 */
export type Read = (route: string, params: Record<string, string>, workspace: string | null, body?: unknown) => Promise<{ status: number; body: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The tools that can move credits (spend, stake, fund, subsidise, transfer, withdraw): they ask under `money`. */
export const MONEY_TOOLS: ReadonlySet<string> = new Set(['trade', 'place_order', 'create_metric', 'open_market', 'propose', 'credit_member', 'transfer', 'withdraw']);

/** The tools whose request takes a dry run (body dryRun: true) that prices it exactly. */
const DRY_RUN_TOOLS: ReadonlySet<string> = new Set(['trade', 'create_metric', 'propose']);

const cr = (n: unknown) => (typeof n === 'number' ? `${n.toLocaleString('en-US', { maximumFractionDigits: 2 })} credit${n === 1 ? '' : 's'}` : '? credits');
const num = (n: unknown) => (typeof n === 'number' ? n.toLocaleString('en-US', { maximumFractionDigits: 4 }) : '?');
const day = (d: unknown) => (typeof d === 'string' ? d.slice(0, 10) : '?');
const q = (s: unknown) => `“${String(s)}”`;

/** The remaining fields of a body, as "name: value" (ids stay ids; nothing is hidden). */
function fields(body: unknown, skip: string[] = []): string {
  if (!body || typeof body !== 'object') return '';
  const parts = Object.entries(body as Record<string, unknown>)
    .filter(([k, v]) => !skip.includes(k) && v !== undefined && k !== 'dryRun')
    .map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`);
  return parts.join(', ').slice(0, 600);
}

async function workspaceName(read: Read, workspace: string | null): Promise<string> {
  const ws = await read('/workspaces/current', {}, workspace).catch(() => null);
  return ws?.status === 200 && ws.body?.name ? q(ws.body.name) : workspace ? q(workspace) : 'your default workspace';
}

async function metricNames(read: Read, workspace: string | null): Promise<Map<string, string>> {
  const res = await read('/metrics', {}, workspace).catch(() => null);
  const out = new Map<string, string>();
  if (res?.status === 200 && Array.isArray(res.body)) for (const m of res.body) out.set(m.id, m.name);
  return out;
}

/** The books a creation would open, one line each: metric, branch, date, subsidy. */
function booksLine(books: any[], names: Map<string, string>, newName?: string): string { // eslint-disable-line @typescript-eslint/no-explicit-any
  if (!books.length) return 'it opens no book';
  const shown = books.slice(0, 12).map((b) => `${q(names.get(b.metricId) ?? newName ?? b.metricId)}${b.branch ? ` (${b.branch})` : ''} for ${day(b.targetDate)}: ${cr(b.subsidy)}`);
  return `it opens ${books.length} book${books.length === 1 ? '' : 's'}, subsidy per book: ${shown.join('; ')}${books.length > 12 ? `; and ${books.length - 12} more` : ''}`;
}

export interface Asked {
  message: string;
  /** The dry run's refusal, when it refused: the real request would be refused the same way. */
  refusal?: unknown;
}

/** The confirmation of one call, in sentences. */
export async function confirmationText(
  who: string,
  tool: Tool,
  askType: string,
  call: { path: string; body: unknown; workspace: string | null; params: Record<string, unknown>; self: string },
  read: Read,
): Promise<Asked> {
  const where = await workspaceName(read, call.workspace);
  const body = (call.body ?? {}) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  const head = `${who} wants to ${tool.title} in ${where} (asked because of “${askType}”)`;
  let quote: { status: number; body: any } | null = null; // eslint-disable-line @typescript-eslint/no-explicit-any
  if (DRY_RUN_TOOLS.has(tool.name)) quote = await read(tool.route.path, {}, call.workspace, { ...body, dryRun: true }).catch(() => null);
  const refused = quote && quote.status >= 400 ? quote.body : undefined;
  const refusalLine = refused ? ` The dry run was refused: ${refused?.error ?? JSON.stringify(refused)}` : '';
  const ok = quote && quote.status < 400 ? quote.body : null;

  if (tool.name === 'trade') {
    const mk = body.marketId ? await read('/predictions/markets/:id', { id: String(body.marketId) }, call.workspace).catch(() => null) : null;
    const book = mk?.status === 200 ? `${q(mk.body.title || mk.body.metricName)}${mk.body.branch ? ` (${mk.body.branch} branch)` : ''} for ${day(mk.body.targetDate)}` : q(body.marketId ?? body.metric ?? 'the book');
    const direction = body.direction ?? ok?.direction ?? '?';
    const figures = ok
      ? `${ok.cost !== undefined ? `cost ${cr(ok.cost)}` : `proceeds ${cr(ok.proceeds)}`} for ${num(ok.shares)} shares; consensus ${num(ok.prevConsensus)} → ${num(ok.consensus)}; your balance ${cr(ok.balance)}${ok.affordable === false ? ' (not enough)' : ''}`
      : fields(body, ['marketId', 'direction']);
    return { message: `${head}: ${direction} on ${book}: ${figures}.${refusalLine} Go ahead?`, refusal: refused };
  }
  if (tool.name === 'create_metric' || tool.name === 'propose') {
    const names = await metricNames(read, call.workspace);
    const what = tool.name === 'create_metric' ? `the metric ${q(body.name)}` : `the proposal ${q(body.title)}`;
    const cost = ok
      ? `${booksLine(ok.books ?? [], names, tool.name === 'create_metric' ? String(body.name) : undefined)}; in all ${cr(ok.subsidyNeeded)} from ${ok.payerId === call.self ? 'your balance' : `the balance of participant ${ok.payerId}`} (balance ${cr(ok.balance)}${ok.balanceCovers === false ? ', which does not cover it: the books stay unfunded' : ''})`
      : fields(body);
    return { message: `${head}: ${what}; ${cost}.${refusalLine} Go ahead?`, refusal: refused };
  }
  if (tool.name === 'transfer' || tool.name === 'credit_member') {
    const target = String(body.toAgent ?? call.params.id ?? '');
    const agent = target ? await read('/agents/:id', { id: target }, call.workspace).catch(() => null) : null;
    const name = agent?.status === 200 ? `${q(agent.body.nickname ?? agent.body.name)} (${target})` : q(target);
    return { message: `${head}: move ${cr(body.amount)} from your balance to ${name}${body.memo ? ` with the memo ${q(body.memo)}` : ''}. Go ahead?` };
  }
  if (tool.name === 'withdraw') return { message: `${head}: withdraw ${cr(body.amount)} from your balance to your registered wallet. Go ahead?` };
  if (tool.name.startsWith('delete_')) {
    const kind = tool.name.slice('delete_'.length);
    const id = String(call.params.id ?? '');
    const target = await (kind === 'workspace' ? read('/workspaces/current', {}, id) : read(`/${kind === 'metric' ? 'metrics' : 'groups'}/:id`, { id }, call.workspace)).catch(() => null);
    const name = target?.status === 200 && target.body?.name ? q(target.body.name) : q(id);
    return { message: `${who} wants to delete the ${kind} ${name}${kind === 'workspace' ? '' : ` in ${where}`} (asked because of “${askType}”); this cannot be undone. Go ahead?` };
  }
  const rest = [fields(call.params), fields(body)].filter(Boolean).join('; ');
  return { message: `${head}${rest ? `: ${rest}` : ''}. Go ahead?` };
}
