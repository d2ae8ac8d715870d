/** The `seller-ops` operator CLI (D1.4) against the run's database: the admin operations, end to end. */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, testDatabaseUrl, type TestApp } from '../helpers/test-app.ts';

const run = promisify(execFile);
const bin = path.resolve(import.meta.dirname, '../../bin/seller-ops.js');

async function cli(...args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, [bin, ...args], {
    env: { ...process.env, DATABASE_URL: testDatabaseUrl() },
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('seller-ops CLI', () => {
  it('creates a client, organization, user and token that authenticate, then revokes the token', async () => {
    const client = await cli('client', 'create', '--name', 'CLI client');
    const organization = await cli(
      'organization',
      'create',
      '--client',
      String(client.id),
      '--name',
      'CLI org',
    );
    const user = await cli('user', 'create', '--client', String(client.id), '--name', 'Ivan', '--lang', 'ru');
    const token = await cli('token', 'create', '--user', String(user.id), '--access', 'READ');
    expect(organization).toMatchObject({ clientId: client.id, name: 'CLI org' });
    expect(user).toMatchObject({ clientId: client.id, lang: 'ru', role: 'OWNER' });
    expect(token.token).toMatch(/^so_/);

    const find = () =>
      t.app.inject({
        method: 'GET',
        url: '/api/inbound/find',
        headers: { authorization: String(token.token) },
      });
    expect((await find()).statusCode).toBe(200);
    await cli('token', 'revoke', String(token.id));
    // The revocation reaches this process through the database notification.
    await expect.poll(async () => (await find()).statusCode, { timeout: 5_000 }).toBe(401);
  });

  it('exits with status 1 and a readable message on an unknown id', async () => {
    await expect(
      run(process.execPath, [bin, 'token', 'create', '--user', '999999999', '--access', 'READ'], {
        env: { ...process.env, DATABASE_URL: testDatabaseUrl() },
      }),
    ).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('error_not_found') as unknown });
  });
});
