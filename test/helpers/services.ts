import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A port free now and likely to stay free until the caller listens on it: taken below the kernel's
 * ephemeral range, so an outgoing connection made meanwhile (a cluster's own links) cannot be given
 * it as its local port (a port from listen(0) could, and the later listen failed EADDRINUSE).
 */
export async function freePort(): Promise<number> {
  let low = 32768;
  try {
    low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || low;
  } catch {
    // not Linux: the usual low bound
  }
  const from = Math.max(1024, low - 12_000);
  for (let attempt = 0; ; attempt++) {
    const port = from + Math.floor(Math.random() * (low - from));
    const free = await new Promise<boolean>((resolve) => {
      const srv = createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
    if (free) return port;
    if (attempt > 50) throw new Error('no free port found below the ephemeral range');
  }
}

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | null | false>, ms = 20_000, every = 50): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch {
      // not yet
    }
    if (Date.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

/**
 * A Redis of the test's own, with nothing persisted: `restart()` is a Redis restart that erases
 * every queue, lock and setting, as a crash of an unpersisted Redis does.
 */
export class PrivateRedis {
  private proc?: ChildProcess;
  private readonly dir = mkdtempSync(join(tmpdir(), 'mpps-redis-'));
  constructor(readonly port: number) {}

  static async start(): Promise<PrivateRedis> {
    const r = new PrivateRedis(await freePort());
    await r.up();
    return r;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** The same Redis by its unix socket. */
  get socketUrl(): string {
    return `unix://${this.socketPath}`;
  }

  get socketPath(): string {
    return join(this.dir, 'redis.sock');
  }

  private async up(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--unixsocket', this.socketPath, '--unixsocketperm', '700', '--save', '', '--appendonly', 'no', '--dir', this.dir];
    this.proc = spawn('redis-server', args, { stdio: 'ignore' });
    await waitFor('private redis', async () => {
      const { Redis } = await import('ioredis');
      const c = new Redis({ port: this.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      c.on('error', () => undefined);
      try {
        await c.connect();
        return (await c.ping()) === 'PONG';
      } finally {
        c.disconnect();
      }
    });
  }

  async kill(): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null) return;
    await new Promise<void>((r) => {
      p.once('exit', () => r());
      p.kill('SIGKILL');
    });
  }

  /** SIGKILL and start again on the same port: everything in it is gone. */
  async restart(): Promise<void> {
    await this.kill();
    await this.up();
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A service process (`src/main.ts --role=...`) with every output line kept. */
export class ServiceProcess {
  readonly lines: string[] = [];
  private constructor(readonly proc: ChildProcess) {}

  static spawn(role: 'api' | 'worker' | 'all', env: Record<string, string>): ServiceProcess {
    // node itself, not the tsx launcher: a signal must reach the service, and the launcher cannot relay SIGKILL.
    const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', `--role=${role}`], {
      cwd: process.cwd(),
      env: { ...process.env, LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const sp = new ServiceProcess(proc);
    for (const stream of [proc.stdout!, proc.stderr!]) {
      let buf = '';
      stream.on('data', (chunk: Buffer) => {
        buf += chunk.toString();
        const parts = buf.split('\n');
        buf = parts.pop() ?? '';
        sp.lines.push(...parts.filter((l) => l.trim() !== ''));
      });
    }
    return sp;
  }

  get exited(): boolean {
    return this.proc.exitCode !== null || this.proc.signalCode !== null;
  }

  async waitForLine(what: string, test: (line: string) => boolean, ms = 30_000): Promise<string> {
    const until = Date.now() + ms;
    for (;;) {
      const hit = this.lines.find(test);
      if (hit) return hit;
      if (this.exited) throw new Error(`process exited before ${what}:\n${this.lines.slice(-10).join('\n')}`);
      if (Date.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${what}:\n${this.lines.slice(-10).join('\n')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.exited) return;
    await new Promise<void>((r) => {
      this.proc.once('exit', () => r());
      this.proc.kill(signal);
    });
  }
}
