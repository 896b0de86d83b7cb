import { setFlagsFromString } from 'node:v8';

/**
 * No allocation-site pretenuring (issue 29 step 15, docs/decisions-log.md). Left on, V8 decides from an early
 * burst of rows that stay alive (a listing, the boot's reads) that everything pg's row and date sites
 * allocate lives long, and from then on puts those objects straight into old space: about 2.6 KB a
 * trade of rows that die within the batch, which only a mark-compact frees. Off, a trade leaves about
 * 1.2 KB in old space instead of 3.5 KB, and the scavenges take less time. Set by main's first
 * import, before the service's modules load and compile (on node's command line it would also reach
 * Node's own modules, 0.4 KB a trade, but every launcher would need it and NODE_OPTIONS refuses it).
 */
setFlagsFromString('--no-allocation-site-pretenuring');
