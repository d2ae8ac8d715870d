/**
 * The `seller-ops` command (decision D1.4): `serve` (default), `migrate`, and the operator operations of the
 * admin API (clients, organizations, users, tokens, integrations, cash registers) run directly on the database.
 * With the embedded database in use by a running service, the command connects to that service's server.
 */
import { Command, Option } from 'commander';
import { loadConfig, type Config } from '../config.ts';
import { createDatabase, type Database } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { DataDirInUseError, runningEmbeddedUrl, startEmbeddedPostgres } from '../db/embedded-postgres.ts';
import { AccountService } from '../modules/accounts/service.ts';
import { loadOperatorKey, SecretBox } from '../security/secret-box.ts';
import { AppError } from '../http/errors.ts';
import { renderMessage } from '../http/error-catalog.ts';
import { runUntilSignalled } from '../server.ts';

const log = (message: string) => process.stderr.write(`${message}\n`);

/**
 * Opens the configured database for one command, migrated, with the operator key (SECRET_KEY or
 * `<DATA_DIR>/secret-key`, as the service uses), and returns it with its release function.
 */
async function openDatabase(
  config: Config,
): Promise<{ database: Database; secrets: SecretBox; release: () => Promise<void> }> {
  let url = config.databaseUrl;
  let stopEmbedded: (() => Promise<void>) | undefined;
  if (!url) {
    try {
      const embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, log });
      url = embedded.databaseUrl;
      stopEmbedded = () => embedded.stop();
    } catch (error) {
      if (!(error instanceof DataDirInUseError)) throw error;
      url = await runningEmbeddedUrl(config.dataDir);
      if (!url) throw error;
    }
  }
  const database = createDatabase(url, 2);
  await migrateToLatest(database.db);
  return {
    database,
    secrets: new SecretBox(await loadOperatorKey(config.secretKey, config.dataDir)),
    release: async () => {
      await database.close();
      await stopEmbedded?.();
    },
  };
}

/** Runs one account operation and prints its JSON result. */
function accountCommand<A extends unknown[]>(
  run: (accounts: AccountService, ...args: A) => Promise<unknown>,
) {
  return async (...args: A) => {
    const { database, secrets, release } = await openDatabase(loadConfig());
    try {
      const result = await run(new AccountService(database.db, secrets), ...args);
      process.stdout.write(`${JSON.stringify(result ?? { ok: true }, null, 2)}\n`);
    } finally {
      await release();
    }
  };
}

const id = (value: string): number => {
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed <= 0) throw new Error(`not an id: ${value}`);
  return parsed;
};

const program = new Command('seller-ops').description('seller-ops service and operator commands');

program
  .command('serve', { isDefault: true })
  .description('start the HTTP service (embedded PostgreSQL unless DATABASE_URL is set)')
  .action(() => runUntilSignalled(loadConfig()));

program
  .command('migrate')
  .description('apply pending database migrations and exit')
  .action(async () => {
    const { release } = await openDatabase(loadConfig());
    await release();
    log('migrations applied');
  });

const client = program.command('client').description('clients (accounts)');
client
  .command('create')
  .requiredOption('--name <name>')
  .option('--subscription-expires-at <date-time>')
  .action(
    accountCommand((accounts, options: { name: string; subscriptionExpiresAt?: string }) =>
      accounts.createClient(options),
    ),
  );
client
  .command('update <clientId>')
  .option('--name <name>')
  .option('--subscription-expires-at <date-time>', 'ISO date-time, or "none"')
  .action(
    accountCommand((accounts, clientId: string, options: { name?: string; subscriptionExpiresAt?: string }) =>
      accounts.updateClient(id(clientId), {
        name: options.name,
        subscriptionExpiresAt:
          options.subscriptionExpiresAt === 'none' ? null : options.subscriptionExpiresAt,
      }),
    ),
  );

program
  .command('organization')
  .description('organizations')
  .command('create')
  .requiredOption('--client <clientId>')
  .requiredOption('--name <name>')
  .option('--inn <inn>')
  .action(
    accountCommand((accounts, options: { client: string; name: string; inn?: string }) =>
      accounts.createOrganization(id(options.client), options),
    ),
  );

program
  .command('user')
  .description('users')
  .command('create')
  .requiredOption('--client <clientId>')
  .requiredOption('--name <name>')
  .addOption(new Option('--lang <lang>').choices(['ru', 'en']))
  .addOption(new Option('--role <role>').choices(['OWNER', 'ADMIN', 'MANAGER', 'SUPPORT']).default('OWNER'))
  .action(
    accountCommand(
      (
        accounts,
        options: {
          client: string;
          name: string;
          lang?: 'ru' | 'en';
          role: 'OWNER' | 'ADMIN' | 'MANAGER' | 'SUPPORT';
        },
      ) => accounts.createUser(id(options.client), options),
    ),
  );

const token = program.command('token').description('API tokens');
token
  .command('create')
  .requiredOption('--user <userId>')
  .addOption(new Option('--access <access>').choices(['READ', 'WRITE']).makeOptionMandatory())
  .option('--name <name>')
  .action(
    accountCommand((accounts, options: { user: string; access: 'READ' | 'WRITE'; name?: string }) =>
      accounts.createToken(id(options.user), options),
    ),
  );
token
  .command('revoke <tokenId>')
  .action(accountCommand((accounts, tokenId: string) => accounts.revokeToken(id(tokenId))));

program
  .command('integration')
  .description('prepared marketplace integrations')
  .command('set')
  .requiredOption('--organization <organizationId>')
  .requiredOption('--service <service>', 'e.g. SERVICE_01 (Market1)')
  .requiredOption('--api-key <apiKey>')
  .option('--base-url <url>')
  .action(
    accountCommand(
      (accounts, options: { organization: string; service: string; apiKey: string; baseUrl?: string }) =>
        accounts.setIntegration(id(options.organization), options),
    ),
  );

program
  .command('cash-register')
  .description('fiscal provider settings')
  .command('set')
  .requiredOption('--organization <organizationId>')
  .addOption(
    new Option('--service <service>').choices(['CASH_REGISTER_A', 'CASH_REGISTER_B']).makeOptionMandatory(),
  )
  .requiredOption('--login <login>')
  .requiredOption('--password <password>')
  .option('--base-url <url>')
  .action(
    accountCommand(
      (
        accounts,
        options: {
          organization: string;
          service: 'CASH_REGISTER_A' | 'CASH_REGISTER_B';
          login: string;
          password: string;
          baseUrl?: string;
        },
      ) => accounts.setCashRegister(id(options.organization), options),
    ),
  );

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof AppError) log(`${error.code}: ${renderMessage(error.code, 'en', error.params)}`);
  else log(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
}
