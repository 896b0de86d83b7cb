/** A part to close, or a group of parts closed at once. */
export type CloseStep = (() => unknown) | ReadonlyArray<() => unknown>;

/**
 * The one way to close several parts: every step runs, in order (a group's parts at once), even when
 * one fails (its connection already lost, say), so a failure leaves nothing open behind it; then the
 * first failure is thrown (in step order, and within a group in the group's order).
 */
export async function closeAll(steps: readonly CloseStep[]): Promise<void> {
  let failed: { reason: unknown } | undefined;
  for (const step of steps) {
    const group = typeof step === 'function' ? [step] : step;
    const settled = await Promise.allSettled(group.map((close) => Promise.resolve().then(close)));
    for (const r of settled) if (r.status === 'rejected') failed ??= { reason: r.reason };
  }
  if (failed) throw failed.reason;
}
