/** A webhook endpoint as the API shows it (what presenters read): a plain row, not the TypeORM entity. */
export interface HookRow {
  id: string;
  workspaceId: string;
  agentId: string;
  url: string;
  description: string;
  /** The subscription filters as stored (jsonb). */
  events: unknown;
  previousSecret: string | null;
  previousSecretUntil: Date | null;
  /** The last event seq settled for this endpoint (bigint as text). */
  cursorSeq: string;
  nextAttemptAt: Date | null;
  failingSince: Date | null;
  disabledAt: Date | null;
  disabledReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One delivery attempt as the API shows it. */
export interface HookDeliveryRow {
  /** bigint as text. */
  id: string;
  hookId: string;
  /** bigint as text. */
  eventSeq: string;
  eventType: string;
  attempt: number;
  status: string;
  httpStatus: number | null;
  latencyMs: number;
  response: string;
  error: string | null;
  manual: boolean;
  createdAt: Date;
}
