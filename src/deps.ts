import type { Cluster, Redis } from 'ioredis';
import type { DataSource } from 'typeorm';
import type { JobHub } from '../jobs/hub';
import type { Config } from './config';

/** Time is injected everywhere it matters, so tests move it instead of sleeping. */
export interface Clock {
  now(): Date;
}
export const systemClock: Clock = { now: () => new Date() };

export class ManualClock implements Clock {
  private offsetMs = 0;
  constructor(private fixed: Date | null = null) {}
  now(): Date {
    return this.fixed ? new Date(this.fixed.getTime()) : new Date(Date.now() + this.offsetMs);
  }
  set(at: Date): void {
    this.fixed = new Date(at.getTime());
  }
  advance(ms: number): void {
    if (this.fixed) this.fixed = new Date(this.fixed.getTime() + ms);
    else this.offsetMs += ms;
  }
}

export interface Deps {
  config: Config;
  ds: DataSource;
  /** Only on the Redis layout (QUEUE_BACKEND redis), a Cluster with REDIS_CLUSTER_NODES; everything else works without it. */
  redis?: Redis | Cluster;
  hub: JobHub;
  clock: Clock;
}
