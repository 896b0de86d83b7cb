import type { EntityManager } from 'typeorm';
import type { MarketRow } from '../books';

/**
 * The one registration point. Areas call each other through plain imports; only where an area must
 * call back into one that already imports it (lifecycle -> proposals) does the callee register here.
 * `wireAreas()` (src/services/wireAreas.ts) registers every callback at boot, and start-up refuses
 * to run while one is missing, as it refuses a job without a processor.
 */
export interface Callbacks {
  /** Inside the resolving transaction of a book: the proposals area records its decision scorecard. */
  bookResolved: (m: EntityManager, mk: MarketRow, value: number, finalConsensus: number | null, now: Date) => Promise<void>;
  /**
   * The resolving transaction's share of the standings: a CTE (named `standings_mark`, parameters
   * numbered from `firstParam`) that the book's status UPDATE carries, marking the book pending (no
   * round trip of its own); the `standings` job, enqueued after commit, adds what the book earned and
   * scored for each holder.
   */
  bookResolvedForStats: (mk: MarketRow, now: Date, firstParam: number) => { cte: string; params: unknown[] };
  /** The horizon pass moved a metric's dates: a pending proposal opens the branch pairs it now misses. */
  proposalDatesChanged: (m: EntityManager, proposalId: string, now: Date) => Promise<{ opened: unknown[] }>;
}

const CALLBACKS: ReadonlyArray<keyof Callbacks> = ['bookResolved', 'bookResolvedForStats', 'proposalDatesChanged'];
const registered: Partial<Callbacks> = {};

export function register<K extends keyof Callbacks>(name: K, fn: Callbacks[K]): void {
  registered[name] = fn;
}

export function callback<K extends keyof Callbacks>(name: K): Callbacks[K] {
  const fn = registered[name];
  if (!fn) throw new Error(`Wiring: no callback registered for "${name}"; wireAreas() must run at start-up.`);
  return fn as Callbacks[K];
}

/** Throws, naming them, when callbacks are missing. */
export function assertWired(): void {
  const missing = CALLBACKS.filter((k) => !registered[k]);
  if (missing.length) throw new Error(`Refusing to start: callbacks without a registration: ${missing.join(', ')}`);
}
