import { z } from 'zod';
import type { OrderCancelled, OrderPlacement, TradeResult } from '../src/domain/outcomes';

/**
 * Every queue and every job payload. A family with `laned: true` is split into TRADE_LANES queues
 * `<name>-<k>`, each with global concurrency 1, so jobs for one market apply in arrival order.
 * Start-up refuses to run unless every job here has exactly one processor (workers/index.ts).
 */
const direction = z.enum(['higher', 'lower']);
const nano = z.string().regex(/^\d+$/);
const tradeSpec = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('buy'), direction, amount: nano, limit: z.number().optional() }),
  z.object({ mode: z.literal('target'), direction: direction.optional(), targetValue: z.number(), maxBudget: nano, limit: z.number().optional() }),
  z.object({ mode: z.literal('sell'), direction, shares: nano, limit: z.number().optional() }),
]);

/**
 * One trade request, as its lane job carries it (and trade_requests.job keeps it while it is pending).
 * `key` and `hash`: its Idempotency-Key and body hash, written with its outcome by the batch's transaction.
 */
export const tradeRequest = z.object({
  requestId: z.string(),
  agentId: z.string(),
  workspaceId: z.string().uuid(),
  marketId: z.string().uuid(),
  spec: tradeSpec,
  key: z.string().optional(),
  hash: z.string().optional(),
});
/** Most trade requests one lane job carries (the API batches a lane's requests while its previous batch is in flight). */
export const TRADE_BATCH_LIMIT = 256;

/**
 * A bigint in a job result: a decimal string on the queue (results are JSON), a bigint to the code on
 * both sides. The worker encodes a processor's result with its schema and enqueueAndWait decodes it
 * (z.encode / schema.parse), so no processor or caller converts by hand.
 */
const bigintText = z.codec(z.string().regex(/^-?\d+$/), z.bigint(), { decode: (s) => BigInt(s), encode: (b) => b.toString() });
const counts = <K extends string>(...keys: K[]) => z.object(Object.fromEntries(keys.map((k) => [k, z.number()])) as Record<K, z.ZodNumber>);
/**
 * A trade, order placement or cancel as the API answers it. Its body is the stored response, passed
 * through as it is: checked to be an object, not copied key by key (z.record costs ~2 us an outcome).
 */
const body = z.custom<Record<string, unknown>>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), 'an object');
/** An outcome whose applied body is T (the trading area's data type; a refusal's body is the error body). */
const outcome = <T>() =>
  z.discriminatedUnion('ok', [z.object({ ok: z.literal(true), body: z.custom<T>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), 'an object') }), z.object({ ok: z.literal(false), body })]);
const resolveOutcome = z.object({
  marketId: z.string(),
  outcome: z.enum(['resolved', 'voided', 'waiting', 'skipped', 'untouched']),
  value: z.number().optional(),
  reason: z.string().optional(),
  payout: bigintText.optional(),
});
/** A job run for its effect only (nothing waits for its result; BullMQ stores undefined as null). */
const none = z.union([z.void(), z.null()]);
/**
 * A lane batch's outcomes, one per request in the batch's order, as its callers hear them: in the
 * notices the batch's own write commits (services/trading/outcomeNotices), not over the queue.
 */
export const tradeOutcomes = z.object({ outcomes: z.array(outcome<TradeResult>()) });

/**
 * Each family's `jobs` (payload schemas) and, beside them, `results`: what each job's processor
 * returns. `family` checks that both name the same jobs.
 */
function family<J extends Record<string, z.ZodType>, R extends { [K in keyof J]: z.ZodType }, X extends { laned: boolean; concurrency?: number }>(
  def: X & { jobs: J; results: R & Record<Exclude<keyof R, keyof J>, never> },
): X & { jobs: J; results: R } {
  return def;
}

export const queueFamilies = {
  trade: family({
    laned: true,
    jobs: {
      // Trade requests that all hash to this lane, in arrival order, applied in one transaction.
      trade: z.object({ trades: z.array(tradeRequest).min(1).max(TRADE_BATCH_LIMIT) }),
      // A batch of due books that all hash to this lane.
      resolve: z.object({ marketIds: z.array(z.string().uuid()).min(1).max(500) }),
      settle: z.object({ marketId: z.string().uuid(), value: z.number(), reason: z.string() }),
      // A book voided by hand (POST /predictions/markets/{id}/void, issue 25).
      void: z.object({ marketId: z.string().uuid(), reason: z.string() }),
      // Limit orders (issue 14): placed, cancelled and expired on their market's lane.
      placeOrder: z.object({
        orderId: z.string().uuid(),
        agentId: z.string(),
        workspaceId: z.string().uuid(),
        marketId: z.string().uuid(),
        direction,
        limit: z.number(),
        shares: nano.optional(),
        amount: nano.optional(),
        expiresAt: z.string().optional(),
        idempotencyKey: z.string().optional(),
        bodyHash: z.string().optional(),
      }),
      cancelOrder: z.object({ orderId: z.string().uuid(), agentId: z.string(), workspaceId: z.string().uuid(), marketId: z.string().uuid() }),
      expireOrder: z.object({ orderId: z.string().uuid(), marketId: z.string().uuid() }),
    },
    results: {
      // Nothing: the outcomes travel in the batch's commit notices (tradeOutcomes), and a job result
      // would be serialised again, stored with the kept job and copied into the queue's event stream.
      trade: none,
      resolve: z.object({ outcomes: z.array(resolveOutcome) }),
      settle: z.object({ marketId: z.string(), settled: z.boolean(), payout: bigintText }),
      void: z.object({ marketId: z.string(), voided: z.boolean(), refunded: bigintText }),
      placeOrder: outcome<OrderPlacement>(),
      cancelOrder: outcome<OrderCancelled>(),
      expireOrder: z.object({ expired: z.boolean() }),
    },
  }),
  horizons: family({
    laned: false,
    jobs: {
      refresh: z.object({ workspaceId: z.string().uuid().optional(), metricId: z.string().uuid().optional(), minuteOnly: z.boolean().optional() }),
      resolveDue: z.object({ workspaceId: z.string().uuid().optional() }),
      purgeRequests: z.object({}),
      // Limit orders whose delayed expiry job was lost (issue 14).
      expireOrders: z.object({}),
    },
    results: {
      refresh: counts('metrics', 'opened', 'deactivated', 'voided', 'proposalBranches'),
      resolveDue: z.object({
        checked: z.number(),
        resolved: z.array(z.string()),
        voided: z.array(z.string()),
        waiting: z.array(z.string()),
        skipped: z.array(z.string()),
        pending: z.array(z.string()),
      }),
      purgeRequests: counts('deleted'),
      expireOrders: counts('expired'),
    },
  }),
  outbox: family({
    laned: false,
    jobs: {
      relay: z.object({}),
      // Events past EVENT_RETENTION_DAYS (and delivery log rows as old) are deleted.
      purge: z.object({}),
    },
    results: {
      relay: counts('sequenced', 'swept'),
      purge: counts('events', 'deliveries'),
    },
  }),
  // Webhook delivery: one run drains one endpoint in log order (a lease on its row keeps it to one worker).
  webhooks: family({
    laned: false,
    concurrency: 16,
    jobs: {
      deliver: z.object({ hookId: z.string().uuid() }),
    },
    results: {
      deliver: counts('delivered'),
    },
  }),
  // Participants' standings (issue 23): resolved books added to the aggregates after their resolving
  // transaction committed (it only marks them pending); the sweep takes every pending book (a lost job).
  standings: family({
    laned: false,
    concurrency: 1,
    jobs: {
      record: z.object({ marketIds: z.array(z.string().uuid()).min(1).max(500) }),
      sweep: z.object({}),
    },
    results: {
      record: counts('books', 'holders'),
      sweep: counts('books', 'holders'),
    },
  }),
  // Agent telemetry (issue 25): heartbeats and decision traces past TELEMETRY_RETENTION_DAYS are deleted.
  telemetry: family({
    laned: false,
    jobs: {
      purge: z.object({}),
    },
    results: {
      purge: counts('heartbeats', 'decisions'),
    },
  }),
  // Credits and the chain: deposit verification and withdrawals (each re-enqueues itself, delayed, while the chain is not there yet).
  chain: family({
    laned: false,
    jobs: {
      verifyDeposit: z.object({ depositId: z.string().uuid(), check: z.number().int().min(0) }),
      sendWithdrawal: z.object({ withdrawalId: z.string().uuid(), check: z.number().int().min(0) }),
    },
    results: {
      verifyDeposit: none,
      sendWithdrawal: none,
    },
  }),
  // Large deletions (issue 26): a workspace or participant deleted in batches, each its own short transaction.
  deletions: family({
    laned: false,
    concurrency: 1,
    jobs: {
      run: z.object({ deletionId: z.string().uuid() }),
      // Unfinished deletions untouched for a minute (a lost or failed job) get a job again.
      sweep: z.object({}),
    },
    results: {
      run: counts('batches', 'rows'),
      sweep: counts('enqueued'),
    },
  }),
};

/** On Postgres a schema is BullMQ's namespace (its prefix is a Redis key concern): one per QUEUE_PREFIX. */
export function queueSchema(prefix: string): string {
  return `bullmq_${prefix.toLowerCase().replace(/-/g, '_')}`;
}

export type QueueFamilyName = keyof typeof queueFamilies;
export type JobName<F extends QueueFamilyName> = keyof (typeof queueFamilies)[F]['jobs'] & string;
export type JobPayload<F extends QueueFamilyName, J extends JobName<F>> = z.infer<
  (typeof queueFamilies)[F]['jobs'][J] extends z.ZodType ? (typeof queueFamilies)[F]['jobs'][J] : never
>;
/** What job J's processor returns and enqueueAndWait hands back (bigints as bigints: see bigintText). */
export type JobResult<F extends QueueFamilyName, J extends JobName<F>> = z.output<
  (typeof queueFamilies)[F]['results'][J & keyof (typeof queueFamilies)[F]['results']] extends z.ZodType
    ? (typeof queueFamilies)[F]['results'][J & keyof (typeof queueFamilies)[F]['results']]
    : never
>;

/** Job J's result schema. */
export function resultSchema(family: QueueFamilyName, job: string): z.ZodType | undefined {
  return (queueFamilies[family].results as Record<string, z.ZodType>)[job];
}
