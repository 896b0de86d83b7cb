import type { Deps } from '../src/deps';
import { relayOutbox } from '../src/services/events';
import type { Processors } from './types';

/** outbox: publish committed events to the live feed (Redis stream per workspace). */
export const outboxProcessors = (deps: Deps): Processors<'outbox'> => ({
  relay: async () => relayOutbox(deps),
});
