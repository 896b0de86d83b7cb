/*
 * Preloaded into a bench's server process (`node --require ./bench/gcprobe.cjs`): appends to
 * GCPROBE_FILE one line per garbage collection of 1 ms or more (`gc <wall ms> <pause ms> <kind>`), one
 * per event-loop stall (a 2 ms timer 8 ms or more late: `stall <wall ms> <ms> <ms on the CPU> <ms queued for it>`) and the old space's
 * size and the event loop's utilisation every 250 ms (`old <wall ms> <MB> <utilisation 0-1>`). Wall-clock times, so bench/tail.ts can line them up with
 * its requests. Bench-only: the service itself has no such hook.
 */
const { isMainThread } = require('node:worker_threads');
const fs = require('node:fs');
const v8 = require('node:v8');

const file = process.env.GCPROBE_FILE;
if (file && isMainThread) {
  const fd = fs.openSync(file, 'a');
  const wall = (t) => (performance.timeOrigin + t).toFixed(1);
  const kinds = { 1: 'scavenge', 2: 'mark-compact', 4: 'incremental', 8: 'weak-callbacks' };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (e.duration >= 1) fs.writeSync(fd, `gc ${wall(e.startTime)} ${e.duration.toFixed(2)} ${kinds[e.detail?.kind] ?? e.detail?.kind}\n`);
  }).observe({ entryTypes: ['gc'] });
  // The main thread's time on the CPU and waiting for one (Linux schedstat, ns): a stall that was
  // spent queued is the machine's contention, one spent on the CPU is this process's own work.
  let schedFd = -1;
  try {
    schedFd = fs.openSync(`/proc/self/task/${process.pid}/schedstat`, 'r');
  } catch {
    // not Linux: the stall lines carry NaN
  }
  const buf = Buffer.alloc(128);
  const sched = () => {
    if (schedFd < 0) return { run: NaN, wait: NaN };
    const n = fs.readSync(schedFd, buf, 0, buf.length, 0);
    const [run, wait] = buf.toString('latin1', 0, n).split(' ').map(Number);
    return { run: run / 1e6, wait: wait / 1e6 };
  };
  let last = performance.now();
  let lastSched = sched();
  setInterval(() => {
    const now = performance.now();
    const s = sched();
    if (now - last >= 8) fs.writeSync(fd, `stall ${wall(last)} ${(now - last).toFixed(2)} ${(s.run - lastSched.run).toFixed(2)} ${(s.wait - lastSched.wait).toFixed(2)}\n`);
    last = now;
    lastSched = s;
  }, 2).unref();
  let elu = performance.eventLoopUtilization();
  setInterval(() => {
    const old = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space');
    const busy = performance.eventLoopUtilization(elu).utilization;
    elu = performance.eventLoopUtilization();
    fs.writeSync(fd, `old ${wall(performance.now())} ${(old.space_used_size / 1048576).toFixed(1)} ${busy.toFixed(3)}\n`);
  }, 250).unref();
}
