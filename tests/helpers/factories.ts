/**
 * Small factories that build a fresh account for a test through the real account service, so every test has
 * its own client and never sees another test's data (tenancy keeps them apart on a shared database).
 */
import { randomUUID } from 'node:crypto';
import type { Runtime } from '../../src/runtime.ts';
import { AccountService } from '../../src/modules/accounts/service.ts';

/** A client with one organization, one user and a READ and a WRITE token. */
export interface TestAccount {
  clientId: number;
  organizationId: number;
  userId: number;
  readToken: string;
  writeToken: string;
  /** Creates one more organization of this client. */
  addOrganization(): Promise<number>;
}

/** Creates a test account; `lang` sets the user's language (default `en`, `null` = unset → Russian). */
export async function createAccount(
  runtime: Runtime,
  options: { lang?: 'ru' | 'en' | null; role?: 'OWNER' | 'ADMIN' | 'MANAGER' | 'SUPPORT' } = {},
): Promise<TestAccount> {
  const accounts = new AccountService(runtime.database.db, runtime.secrets);
  const suffix = randomUUID().slice(0, 8);
  const client = await accounts.createClient({ name: `Test client ${suffix}` });
  const organization = await accounts.createOrganization(client.id, { name: `Org ${suffix}` });
  const user = await accounts.createUser(client.id, {
    name: `User ${suffix}`,
    lang: options.lang === undefined ? 'en' : options.lang,
    role: options.role ?? 'OWNER',
  });
  const read = await accounts.createToken(user.id, { access: 'READ' });
  const write = await accounts.createToken(user.id, { access: 'WRITE' });
  return {
    clientId: client.id,
    organizationId: organization.id,
    userId: user.id,
    readToken: read.token,
    writeToken: write.token,
    addOrganization: async () =>
      (await accounts.createOrganization(client.id, { name: `Org 2 ${suffix}` })).id,
  };
}
