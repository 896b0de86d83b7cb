import type { Deps } from '../src/deps';
import { purgeTelemetry } from '../src/services/telemetry';
import type { Processors } from './types';

/** telemetry: the hourly retention purge (TELEMETRY_RETENTION_DAYS). */
export const telemetryProcessors = (deps: Deps): Processors<'telemetry'> => ({
  purge: async () => purgeTelemetry(deps, deps.config.TELEMETRY_RETENTION_DAYS),
});
