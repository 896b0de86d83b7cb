import { z } from 'zod';

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

/** One trade request, as journalled in trade_requests.job. */
export const tradeRequest = z.object({ requestId: z.string(), agentId: z.string(), workspaceId: z.string().uuid(), marketId: z.string().uuid(), spec: tradeSpec });
/** Most trade requests one lane job carries (the API batches a lane's requests while its previous batch is in flight). */
export const TRADE_BATCH_LIMIT = 256;

export const queueFamilies = {
  trade: {
    laned: true,
    jobs: {
      // Trade requests that all hash to this lane, in arrival order, applied in one transaction.
      trade: z.object({ trades: z.array(tradeRequest).min(1).max(TRADE_BATCH_LIMIT) }),
      // A batch of due books that all hash to this lane.
      resolve: z.object({ marketIds: z.array(z.string().uuid()).min(1).max(500) }),
      settle: z.object({ marketId: z.string().uuid(), value: z.number(), reason: z.string() }),
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
  },
  horizons: {
    laned: false,
    jobs: {
      refresh: z.object({ workspaceId: z.string().uuid().optional(), metricId: z.string().uuid().optional(), minuteOnly: z.boolean().optional() }),
      resolveDue: z.object({ workspaceId: z.string().uuid().optional() }),
      purgeRequests: z.object({}),
      // Limit orders whose delayed expiry job was lost (issue 14).
      expireOrders: z.object({}),
    },
  },
  outbox: {
    laned: false,
    jobs: {
      relay: z.object({}),
      // Events past EVENT_RETENTION_DAYS (and delivery log rows as old) are deleted.
      purge: z.object({}),
    },
  },
  // Webhook delivery: one run drains one endpoint in log order (a lease on its row keeps it to one worker).
  webhooks: {
    laned: false,
    concurrency: 16,
    jobs: {
      deliver: z.object({ hookId: z.string().uuid() }),
    },
  },
  // Credits and the chain: deposit verification and withdrawals (each re-enqueues itself, delayed, while the chain is not there yet).
  chain: {
    laned: false,
    jobs: {
      verifyDeposit: z.object({ depositId: z.string().uuid(), check: z.number().int().min(0) }),
      sendWithdrawal: z.object({ withdrawalId: z.string().uuid(), check: z.number().int().min(0) }),
    },
  },
} as const;

/** On Postgres a schema is BullMQ's namespace (its prefix is a Redis key concern): one per QUEUE_PREFIX. */
export function queueSchema(prefix: string): string {
  return `bullmq_${prefix.toLowerCase().replace(/-/g, '_')}`;
}

export type QueueFamilyName = keyof typeof queueFamilies;
export type JobName<F extends QueueFamilyName> = keyof (typeof queueFamilies)[F]['jobs'] & string;
export type JobPayload<F extends QueueFamilyName, J extends JobName<F>> = z.infer<
  (typeof queueFamilies)[F]['jobs'][J] extends z.ZodType ? (typeof queueFamilies)[F]['jobs'][J] : never
>;
