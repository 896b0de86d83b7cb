/**
 * DELETE /connections/{id}: the client's refresh tokens, stored access tokens and consent for the
 * account go, in the caller's transaction (the next authorization asks for consent again).
 */
export async function revokeClientGrants(m: { query(sql: string, params?: unknown[]): Promise<unknown> }, userId: string, clientId: string): Promise<void> {
  await m.query(`DELETE FROM auth_oauth_access_tokens WHERE "userId" = $1 AND "clientId" = $2`, [userId, clientId]);
  await m.query(`DELETE FROM auth_oauth_refresh_tokens WHERE "userId" = $1 AND "clientId" = $2`, [userId, clientId]);
  await m.query(`DELETE FROM auth_oauth_consents WHERE "userId" = $1 AND "clientId" = $2`, [userId, clientId]);
}
