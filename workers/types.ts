import type { Job } from 'bullmq';
import type { JobName, JobPayload, JobResult, QueueFamilyName } from '../jobs/definitions';

export type Processors<F extends QueueFamilyName> = {
  /** Returns the job's declared result (jobs/definitions.ts `results`), encoded for the queue by workers/index.ts. */
  [J in JobName<F>]: (data: JobPayload<F, J>, job: Job) => Promise<JobResult<F, J>>;
};
