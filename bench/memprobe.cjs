/*
 * Preloaded into a bench's server process (`node --require ./bench/memprobe.cjs`): every second it
 * samples process.memoryUsage(), and every MEMPROBE_EVERY_MS (10 s) it writes the latest sample, the
 * smallest and largest heapUsed of the last minute (the smallest is the live set plus whatever old-space
 * garbage no major collection took meanwhile), V8's malloced memory and the garbage collections'
 * count and pause time to MEMPROBE_FILE (one JSON object, replaced each time). Bench-only: the
 * service itself has no such hook.
 */
const { writeFileSync, renameSync } = require('node:fs');
const v8 = require('node:v8');

const { isMainThread } = require('node:worker_threads');

// Node 20 also runs --require preloads in the module-hooks thread (tsx's loader): only the main thread reports.
const file = process.env.MEMPROBE_FILE;
if (file && isMainThread) {
  const every = Number(process.env.MEMPROBE_EVERY_MS || 10_000);
  const lastMinute = []; // heapUsed, one a second
  const rssLastMinute = [];
  const gcs = { count: 0, ms: 0, major: 0, majorMs: 0 };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gcs.count++;
      gcs.ms += e.duration;
      // kind 4 = major (mark-sweep-compact) in perf_hooks.constants.NODE_PERFORMANCE_GC_MAJOR
      if ((e.detail?.kind ?? e.kind) === 4) {
        gcs.major++;
        gcs.majorMs += e.duration;
      }
    }
  }).observe({ entryTypes: ['gc'] });
  setInterval(() => {
    const m = process.memoryUsage();
    lastMinute.push(m.heapUsed);
    if (lastMinute.length > 60) lastMinute.shift();
    rssLastMinute.push(m.rss);
    if (rssLastMinute.length > 60) rssLastMinute.shift();
  }, 1000).unref();
  setInterval(() => {
    const m = process.memoryUsage();
    const h = v8.getHeapStatistics();
    const out = {
      at: Date.now(),
      ...m,
      minHeapUsed: Math.min(m.heapUsed, ...lastMinute),
      maxHeapUsed: Math.max(m.heapUsed, ...lastMinute),
      maxRss: Math.max(m.rss, ...rssLastMinute),
      mallocedMemory: h.malloced_memory,
      peakMallocedMemory: h.peak_malloced_memory,
      heapSizeLimit: h.heap_size_limit,
      gcs: { ...gcs },
    };
    try {
      writeFileSync(`${file}.tmp`, JSON.stringify(out));
      renameSync(`${file}.tmp`, file);
    } catch {
      /* the bench reads the previous sample */
    }
  }, every).unref();
}
