import type { Deps } from '../src/deps';
import { drainHook } from '../src/services/hooks';
import type { Processors } from './types';

/** webhooks: deliver one endpoint's pending events in order. */
export const webhookProcessors = (deps: Deps): Processors<'webhooks'> => ({
  deliver: async ({ hookId }) => drainHook(deps, hookId),
});
