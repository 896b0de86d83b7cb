/*
 * A disk's flush latency under a bench's load (bench/tail.ts --disk-probe DIR): every 10 ms, one
 * 8 kB write and fdatasync to a file in DIR, as Postgres flushes its WAL at each commit. Appends
 * `disk <wall ms> <ms>` to the file named by the second argument for each flush of 5 ms or more, and
 * at exit (SIGTERM) `disks <count> <p50 ms> <p99 ms> <max ms>`. A process of its own: a flush blocks
 * its thread. Bench-only.
 *   node bench/diskprobe.cjs DIR OUT
 */
const fs = require('node:fs');
const path = require('node:path');

const [dir, outFile] = process.argv.slice(2);
const file = path.join(dir, `diskprobe-${process.pid}.tmp`);
const fd = fs.openSync(file, 'w');
const out = fs.openSync(outFile, 'a');
const page = Buffer.alloc(8192, 1);
const all = [];
let n = 0;
const timer = setInterval(() => {
  fs.writeSync(fd, page, 0, page.length, (n++ % 256) * page.length);
  const t = performance.now();
  fs.fdatasyncSync(fd);
  const ms = performance.now() - t;
  all.push(ms);
  if (ms >= 5) fs.writeSync(out, `disk ${(performance.timeOrigin + t).toFixed(1)} ${ms.toFixed(2)}\n`);
}, 10);
process.on('SIGTERM', () => {
  clearInterval(timer);
  fs.closeSync(fd);
  fs.rmSync(file, { force: true });
  const s = all.sort((a, b) => a - b);
  const at = (q) => (s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN).toFixed(2);
  fs.writeSync(out, `disks ${s.length} ${at(0.5)} ${at(0.99)} ${(s[s.length - 1] ?? NaN).toFixed(1)}\n`);
  process.exit(0);
});
