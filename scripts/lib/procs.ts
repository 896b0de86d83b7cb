/** Ports and processes of a service started by a script (scripts/smoke-embedded.ts, scripts/start-times.ts). */
import { readdirSync, readFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';

export const freePort = () =>
  new Promise<number>((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
  });

export const answers = (port: number) =>
  new Promise<boolean>((res) => {
    const sock = createConnection({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      sock.destroy();
      res(ok);
    };
    sock.setTimeout(500, () => done(false));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });

/**
 * Processes (pid and command line) whose environment holds `marker` or whose command line names
 * `dir`, and their descendants (Postgres rewrites its backends' titles over the environment).
 */
export function leftovers(marker: string, dir: string): string[] {
  const procs = new Map<number, { ppid: number; cmd: string; ours: boolean }>();
  for (const p of readdirSync('/proc').filter((x) => /^\d+$/.test(x) && Number(x) !== process.pid)) {
    try {
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').join(' ').trim();
      const env = readFileSync(`/proc/${p}/environ`, 'utf8');
      const ppid = Number(readFileSync(`/proc/${p}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1]);
      procs.set(Number(p), { ppid, cmd, ours: env.includes(marker) || cmd.includes(dir) });
    } catch {
      // gone meanwhile
    }
  }
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of procs.values()) if (!p.ours && procs.get(p.ppid)?.ours) grew = p.ours = true;
  }
  return [...procs].filter(([, p]) => p.ours).map(([pid, p]) => `${pid} ${p.cmd.slice(0, 120)}`);
}
