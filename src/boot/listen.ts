import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { ApiError } from '../errors';
import { logger } from '../logger';
import { requestIdFor } from '../requestId';

/** A start-up failure the operator fixes (a port taken, a bad setting): one sentence, no stack trace. */
export class StartupError extends Error {}

function explain(err: NodeJS.ErrnoException, port: number): Error {
  if (err.code === 'EADDRINUSE') return new StartupError(`Port ${port} is in use: stop what holds it or set PORT.`);
  if (err.code === 'EACCES') return new StartupError(`Port ${port} needs privileges this process lacks: set PORT to a port above 1023.`);
  return new StartupError(`Cannot listen on port ${port}: ${err.message}.`);
}

export interface BoundHttp {
  server: Server;
  /** Serve with the app from now on, starting with the requests that arrived while the service booted. */
  attach(handler: RequestListener): void;
  /** The start failed: answer the requests waiting for it (and any until the port closes) with a 503. */
  refuse(): void;
}

/**
 * Bind the HTTP port first, before the database starts and before a master key is generated, so a
 * port clash stops the start with one sentence and changes nothing. Requests arriving while the
 * service boots wait and are served once the app is attached.
 */
export async function bindHttp(port: number): Promise<BoundHttp> {
  const waiting: Array<[IncomingMessage, ServerResponse]> = [];
  let handler: RequestListener | undefined;
  const server = createServer((req, res) => (handler ? handler(req, res) : waiting.push([req, res])));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(explain(err, port)));
    server.listen(port, () => resolve());
  });
  server.removeAllListeners('error');
  server.on('error', (err) => logger.error({ err }, 'http server error'));
  const attach = (h: RequestListener) => {
    handler = h;
    for (const [req, res] of waiting.splice(0)) h(req, res);
  };
  return {
    server,
    attach,
    refuse() {
      // Unanswered, they would hold the port's close (and the exit) for as long as their clients wait.
      const body = JSON.stringify(new ApiError('service_unavailable', 'The service failed to start; nothing was written. Retry once it is back.').toBody());
      attach((req, res) => {
        res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '5', 'x-request-id': requestIdFor(req.headers['x-request-id']), connection: 'close' });
        res.end(body);
      });
    },
  };
}
