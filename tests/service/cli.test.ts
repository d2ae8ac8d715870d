/** The `seller-ops` operator CLI (D1.4) against the run's database: the admin operations, end to end. */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, testDatabaseUrl, TEST_SECRET_KEY, type TestApp } from '../helpers/test-app.ts';

const run = promisify(execFile);
const bin = path.resolve(import.meta.dirname, '../../bin/seller-ops.js');

/** Runs the CLI on the run's database with the tests' operator key; returns its standard output. */
async function cliText(...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [bin, ...args], {
    env: { ...process.env, DATABASE_URL: testDatabaseUrl(), SECRET_KEY: TEST_SECRET_KEY },
  });
  return stdout;
}

const cli = async (...args: string[]) => JSON.parse(await cliText(...args)) as Record<string, unknown>;

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

  it('lists clients, organizations, users and tokens (never a token itself)', async () => {
    const client = await cli('client', 'create', '--name', 'Listed client');
    const organization = await cli(
      'organization',
      'create',
      '--client',
      String(client.id),
      '--name',
      'Listed org',
    );
    const user = await cli('user', 'create', '--client', String(client.id), '--name', 'Olga', '--lang', 'en');
    const token = await cli(
      'token',
      'create',
      '--user',
      String(user.id),
      '--access',
      'WRITE',
      '--name',
      'ERP',
    );
    await cli('token', 'revoke', String(token.id));

    const clients = JSON.parse(await cliText('client', 'list')) as Array<{ id: number }>;
    expect(clients.map((row) => row.id)).toContain(client.id);
    expect(JSON.parse(await cliText('organization', 'list', '--client', String(client.id)))).toEqual([
      { id: organization.id, clientId: client.id, name: 'Listed org', inn: null },
    ]);
    expect(JSON.parse(await cliText('user', 'list', '--client', String(client.id)))).toEqual([
      { id: user.id, clientId: client.id, name: 'Olga', lang: 'en', role: 'OWNER' },
    ]);
    const tokensText = await cliText('token', 'list', '--user', String(user.id));
    expect(tokensText).not.toContain(String(token.token));
    expect(JSON.parse(tokensText)).toEqual([
      {
        id: token.id,
        userId: user.id,
        access: 'WRITE',
        name: 'ERP',
        createdAt: expect.any(String) as string,
        revokedAt: expect.any(String) as string,
      },
    ]);
  });

  // 15 CLI processes one after the other, each loading the TypeScript sources: a minute was not enough while the
  // machine was busy with other work
  it('prints its version and describes every command and option', { timeout: 180_000 }, async () => {
    expect((await cliText('--version')).trim()).toMatch(/^\d+\.\d+\.\d+$/);
    for (const command of [
      [],
      ['client'],
      ['client', 'create'],
      ['client', 'update'],
      ['client', 'list'],
      ['organization', 'create'],
      ['organization', 'list'],
      ['user', 'create'],
      ['user', 'list'],
      ['token', 'create'],
      ['token', 'revoke'],
      ['token', 'list'],
      ['integration', 'set'],
      ['cash-register', 'set'],
    ]) {
      const help = await cliText(...command, '--help');
      // Every option line of the help carries a description after its flags.
      for (const line of help.split('\n').filter((text) => /^\s+-/.test(text)))
        expect(line.trim(), `${command.join(' ')}: ${line}`).toMatch(/^\S.*\s{2,}\S/);
    }
  });

  it('exits with status 1 and a readable message on an unknown id', async () => {
    await expect(
      run(process.execPath, [bin, 'token', 'create', '--user', '999999999', '--access', 'READ'], {
        env: { ...process.env, DATABASE_URL: testDatabaseUrl() },
      }),
    ).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('error_not_found') as unknown });
  });
});
