/*
 * Preloaded into a bench's server process (`node --require ./bench/timelineprobe.cjs`): subscribes to
 * the trade batches' timeline (src/services/trading/batchTimeline.ts, channel 'mpps:trade-batch') and
 * appends one JSON line per mark to TIMELINE_FILE, buffered and written every 250 ms and at exit:
 * a mark costs the server's main thread a JSON.stringify, and the buffer a write four times a
 * second, not a write each. Bench-only: the service itself subscribes to nothing.
 */
const { isMainThread } = require('node:worker_threads');
const { subscribe } = require('node:diagnostics_channel');
const fs = require('node:fs');

const file = process.env.TIMELINE_FILE;
if (file && isMainThread) {
  const fd = fs.openSync(file, 'a');
  let lines = [];
  const flush = () => {
    if (!lines.length) return;
    fs.writeSync(fd, lines.join('\n') + '\n');
    lines = [];
  };
  subscribe('mpps:trade-batch', (mark) => lines.push(JSON.stringify(mark)));
  setInterval(flush, 250).unref();
  process.on('exit', flush);
}
