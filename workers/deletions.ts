import type { Deps } from '../src/deps';
import { markDeletionFailed, runDeletion, sweepDeletions } from '../src/services/deletions';
import type { Processors } from './types';

/** deletions: a workspace or participant deleted in batches; the last failed attempt is recorded on the deletion. */
export const deletionProcessors = (deps: Deps): Processors<'deletions'> => ({
  run: async (data, job) => {
    try {
      return await runDeletion(deps, data.deletionId);
    } catch (err) {
      if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) await markDeletionFailed(deps, data.deletionId, err);
      throw err;
    }
  },
  sweep: async () => sweepDeletions(deps),
});
