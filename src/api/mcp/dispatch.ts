import { request as httpRequest } from 'node:http';

/** Where this server was reached (the connector sends its requests back to the same listener). */
export interface Loopback {
  host: string;
  port: number;
}

export interface RouteAnswer {
  status: number;
  body: unknown;
}

/**
 * One request through the API itself, as a REST client holding the connection's key would send
 * it: the same validation, authorization, scopes, rate limits, presenters and error bodies.
 */
export function sendThroughApi(
  at: Loopback,
  req: { method: string; path: string; query: Record<string, string>; body: unknown; headers: Record<string, string> },
): Promise<RouteAnswer> {
  const qs = new URLSearchParams(req.query).toString();
  const payload = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body));
  return new Promise((resolve, reject) => {
    const r = httpRequest(
      {
        host: at.host,
        port: at.port,
        method: req.method,
        path: `/api${req.path}${qs ? `?${qs}` : ''}`,
        headers: { accept: 'application/json', ...req.headers, ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text || undefined;
          if (text && /json/.test(String(res.headers['content-type'] ?? ''))) {
            try {
              body = JSON.parse(text);
            } catch {
              body = text;
            }
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    if (payload) r.write(payload);
    r.end();
  });
}
