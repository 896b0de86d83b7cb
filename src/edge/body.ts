import type Koa from 'koa';

/**
 * The one bounded body reader of the front doors that read a body themselves (the account system's
 * guard, the pages' forms): a declared length over the limit is refused before a byte is read, an
 * undeclared one as soon as it passes the limit; the request is then destroyed (nothing more is read).
 */
export async function readBounded(ctx: Koa.Context, limit: number, tooLarge: () => Error): Promise<string> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limit) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of ctx.req) {
    size += (c as Buffer).length;
    if (size > limit) {
      ctx.req.destroy();
      throw tooLarge();
    }
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
