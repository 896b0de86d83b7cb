import pino from 'pino';

export const logger = pino({
  level: process.env.LOG_LEVEL ?? 'info',
  base: { service: 'mpps' },
  redact: ['req.headers["x-agent-key"]', 'req.headers["x-api-key"]', 'apiKey'],
});
