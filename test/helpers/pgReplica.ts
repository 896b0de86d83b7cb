import { execFile } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './services';

const run = promisify(execFile);

/** The newest Debian/Ubuntu Postgres binaries (initdb, pg_ctl, pg_basebackup). */
function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'pg_basebackup'))) : [];
  if (!versions.length) throw new Error(`No Postgres binaries with pg_basebackup under ${root}: install postgresql (the replica tests need initdb, pg_ctl and pg_basebackup).`);
  return join(root, versions.sort((a, b) => Number(b) - Number(a))[0], 'bin');
}

/**
 * A private primary and one streaming replica of it (initdb, `pg_basebackup -R`), on ports of their
 * own, trust on 127.0.0.1 and replication allowed: the system Postgres is left as it is. initdb
 * refuses root, so as root (CI) every command runs as the `postgres` user.
 */
export class PgPair {
  private constructor(
    readonly dir: string,
    readonly primaryPort: number,
    readonly replicaPort: number,
    private readonly bin: string,
    private readonly asUser: string[],
  ) {}

  static async start(): Promise<PgPair> {
    const bin = binDir();
    const root = process.getuid?.() === 0;
    const dir = mkdtempSync(join(tmpdir(), 'mpps-pgpair-'));
    if (root) {
      const { stdout } = await run('id', ['-u', 'postgres']);
      const { stdout: gid } = await run('id', ['-g', 'postgres']);
      chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
    }
    const pair = new PgPair(dir, await freePort(), await freePort(), bin, root ? ['runuser', '-u', 'postgres', '--'] : []);
    try {
      await pair.init();
    } catch (err) {
      await pair.stop();
      throw err;
    }
    return pair;
  }

  private async pg(tool: string, args: string[]): Promise<string> {
    const [cmd, ...rest] = [...this.asUser, join(this.bin, tool), ...args];
    const { stdout } = await run(cmd, rest, { cwd: this.dir, timeout: 120_000 });
    return stdout;
  }

  private get primaryDir(): string {
    return join(this.dir, 'primary');
  }
  private get replicaDir(): string {
    return join(this.dir, 'replica');
  }

  private async init(): Promise<void> {
    await this.pg('initdb', ['-D', this.primaryDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    // The tests' speed, not durability: fsync off. Replication on 127.0.0.1 without a password.
    appendFileSync(
      join(this.primaryDir, 'postgresql.conf'),
      `\nport = ${this.primaryPort}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '${this.dir}'\nwal_level = replica\nmax_wal_senders = 4\nhot_standby = on\nfsync = off\nsynchronous_commit = on\nfull_page_writes = off\nmax_connections = 120\nshared_buffers = 32MB\n`,
    );
    appendFileSync(join(this.primaryDir, 'pg_hba.conf'), '\nhost replication all 127.0.0.1/32 trust\n');
    await this.pg('pg_ctl', ['-D', this.primaryDir, '-l', join(this.dir, 'primary.log'), '-w', 'start']);
    await this.pg('pg_basebackup', ['-h', '127.0.0.1', '-p', String(this.primaryPort), '-U', 'postgres', '-D', this.replicaDir, '-R', '-X', 'stream', '--no-sync']);
    appendFileSync(join(this.replicaDir, 'postgresql.conf'), `\nport = ${this.replicaPort}\n`);
    await this.startReplica();
  }

  async startReplica(): Promise<void> {
    await this.pg('pg_ctl', ['-D', this.replicaDir, '-l', join(this.dir, 'replica.log'), '-w', 'start']);
  }

  /** The replica dies at once (no shutdown checkpoint), as a crashed machine's would. */
  async killReplica(): Promise<void> {
    await this.pg('pg_ctl', ['-D', this.replicaDir, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
  }

  url(db: string, which: 'primary' | 'replica'): string {
    return `postgres://postgres@127.0.0.1:${which === 'primary' ? this.primaryPort : this.replicaPort}/${db}`;
  }

  async stop(): Promise<void> {
    for (const d of [this.replicaDir, this.primaryDir]) {
      if (existsSync(join(d, 'postmaster.pid'))) await this.pg('pg_ctl', ['-D', d, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
