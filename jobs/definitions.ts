import { z } from 'zod';

/**
 * Every queue and every job payload. A family with `laned: true` is split into TRADE_LANES queues
 * `<name>-<k>`, each with global concurrency 1, so jobs for one market apply in arrival order.
 * Start-up refuses to run unless every job here has exactly one processor (workers/index.ts).
 */
export const queueFamilies = {
  outbox: {
    laned: false,
    jobs: {
      relay: z.object({}),
    },
  },
} as const;

export type QueueFamilyName = keyof typeof queueFamilies;
export type JobName<F extends QueueFamilyName> = keyof (typeof queueFamilies)[F]['jobs'] & string;
export type JobPayload<F extends QueueFamilyName, J extends JobName<F>> = z.infer<
  (typeof queueFamilies)[F]['jobs'][J] extends z.ZodType ? (typeof queueFamilies)[F]['jobs'][J] : never
>;
