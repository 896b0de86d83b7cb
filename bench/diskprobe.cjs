/*
 * A disk's flush latency under a bench's load (bench/tail.ts --disk-probe DIR): every 10 ms, one
 * 8 kB write and fdatasync to a file in DIR, as Postgres flushes its WAL at each commit. Appends
 * `disk <wall ms> <ms>` for each flush to the file named by the second argument (bench/tail.ts
 * summarises them). A process of its own: a flush blocks its thread. Stops on SIGTERM. Bench-only.
 *   node bench/diskprobe.cjs DIR OUT
 */
const fs = require('node:fs');
const path = require('node:path');

const [dir, outFile] = process.argv.slice(2);
const file = path.join(dir, `diskprobe-${process.pid}.tmp`);
const fd = fs.openSync(file, 'w');
const out = fs.openSync(outFile, 'a');
const page = Buffer.alloc(8192, 1);
let n = 0;
const timer = setInterval(() => {
  fs.writeSync(fd, page, 0, page.length, (n++ % 256) * page.length);
  const t = performance.now();
  fs.fdatasyncSync(fd);
  fs.writeSync(out, `disk ${(performance.timeOrigin + t).toFixed(1)} ${(performance.now() - t).toFixed(2)}\n`);
}, 10);
process.on('SIGTERM', () => {
  clearInterval(timer);
  fs.closeSync(fd);
  fs.rmSync(file, { force: true });
  process.exit(0);
});
