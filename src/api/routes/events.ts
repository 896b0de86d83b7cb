import { z } from 'zod';
import type { Principal } from '../../domain/capabilities';
import { policies } from '../../services/access';
import { EVENT_TYPES, feedScopeOf, openEventStream, readFeedPage, type FeedScope } from '../../services/events';
import { presentEvent } from '../presenters/events';
import { defineRoute, type Call } from '../registry';

const seqText = z.string().regex(/^\d{1,18}$/, 'must be an event id (digits)');
const typeList = z
  .string()
  .transform((v) => v.split(',').map((t) => t.trim()).filter(Boolean))
  .pipe(z.array(z.enum(EVENT_TYPES, { error: `each type must be one of ${EVENT_TYPES.join(', ')}` })).max(EVENT_TYPES.length * 2));

const eventSchema = z.object({
  id: z.string(),
  type: z.string(),
  workspaceId: z.string().nullable(),
  timestamp: z.iso.datetime({ offset: true }),
  data: z.record(z.string(), z.unknown()),
});

/** The named workspace (read checked) or the caller's own workspaces; 401 with neither. */
async function scopeOf(c: Call<unknown, unknown, unknown>): Promise<FeedScope> {
  const named = c.koa.get('x-workspace-id').trim();
  if (named) {
    c.require('read');
    return feedScopeOf(c.deps, c.caller as Principal | null, c.workspace().workspace.id, c.workspace().viewLink);
  }
  return feedScopeOf(c.deps, c.identity(), null);
}

export const getEvents = defineRoute({
  method: 'GET',
  path: '/events',
  auth: policies.events.list,
  summary:
    'The event log (spec §6), oldest first: { events: [{ id, type, workspaceId, timestamp, data }], nextCursor, hasMore }. ?after=<id> (exclusive; default: the oldest retained), ?types=a,b, ?limit (<= 500). X-Workspace-Id names one workspace (a public one needs no key); without it, every workspace of the caller. Ids increase; paging on nextCursor never skips an event.',
  query: z.object({ after: seqText.default('0'), types: typeList.optional(), limit: z.coerce.number().int().min(1).max(500).default(100) }),
  response: z.object({ events: z.array(eventSchema), nextCursor: z.string(), hasMore: z.boolean() }),
  errors: ['workspace_not_found', 'not_authorized'],
  handler: async (c) => {
    const scope = await scopeOf(c);
    const { events, through } = await readFeedPage(c.deps, scope, { after: c.query.after, types: c.query.types, limit: c.query.limit });
    return {
      events: events.map(presentEvent),
      nextCursor: through,
      hasMore: events.length === c.query.limit,
    };
  },
});

export const getEventsStream = defineRoute({
  method: 'GET',
  path: '/events/stream',
  readsPrimary: true,
  auth: policies.events.readStream,
  summary:
    'Server-Sent Events of the same log: each event as `id: <id>`, `event: <type>`, `data: <the feed item JSON>`; a `: heartbeat` comment every 15 s. Reconnect with Last-Event-ID (or ?after=) to get everything after it; without either the stream starts at the newest event. Same scoping and ?types as GET /events.',
  query: z.object({ after: seqText.optional(), types: typeList.optional() }),
  responseType: 'text/event-stream',
  // The body is a stream of `id:`/`event:`/`data:` frames, not a JSON document.
  response: z.any().describe('text/event-stream: frames of id, event (the type) and data (the feed item JSON); comment lines are heartbeats.'),
  errors: ['workspace_not_found', 'not_authorized', 'validation_failed'],
  handler: async (c) => {
    const scope = await scopeOf(c);
    const lastId = c.koa.get('last-event-id').trim();
    const after = lastId ? seqText.safeParse(lastId) : null;
    const stream = await openEventStream(c.deps, scope, { after: after?.success ? after.data : (c.query.after ?? null), types: c.query.types });
    // Written straight to the socket (not through Koa's pipeline): a client hanging up is the normal end of a stream, not an error.
    const res = c.koa.res;
    c.koa.respond = false;
    c.koa.req.socket.setTimeout(0);
    c.koa.req.socket.setNoDelay(true);
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache, no-transform', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
    res.on('close', () => stream.destroy());
    stream.pipe(res);
    return undefined;
  },
});
