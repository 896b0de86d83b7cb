import type { Job } from 'bullmq';
import type { JobName, JobPayload, QueueFamilyName } from '../jobs/definitions';

export type Processors<F extends QueueFamilyName> = {
  [J in JobName<F>]: (data: JobPayload<F, J>, job: Job) => Promise<unknown>;
};
