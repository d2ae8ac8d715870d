/**
 * The `seller-ops` command (decision D1.4): `serve` (default), `migrate`, and the operator operations of the
 * admin API (clients, organizations, users, tokens, integrations, cash registers) run directly on the database.
 * With the embedded database in use by a running service, the command connects to that service's server.
 */
import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { Value } from 'typebox/value';
import { DictionaryFile, loadDictionary, sampleDictionary } from '../modules/catalog/dictionary.ts';
import { loadConfig, type Config } from '../config.ts';
import { createDatabase, type Database } from '../db/database.ts';
import { withSetUpLock } from '../db/set-up-lock.ts';
import { setUpDatabase } from '../runtime.ts';
import { reachDatabase } from './reach-database.ts';
import { SERVICE_VERSION } from '../backup/service-version.ts';
import { AccountService } from '../modules/accounts/service.ts';
import { listClients, listOrganizations, listTokens, listUsers } from '../modules/accounts/listing.ts';
import { loadOperatorKey, SecretBox } from '../security/secret-box.ts';
import { AppError } from '../http/errors.ts';
import { renderMessage } from '../http/error-catalog.ts';
import { runUntilSignalled } from '../server.ts';
import {
  PROVIDER_URL_VARIABLES,
  SANDBOXES,
  serveSandbox,
  type SandboxServer,
} from '../connectors/sandboxes.ts';
import { TAXATION_SYSTEMS, type TaxationSystem } from '../connectors/cash-register/connector.ts';

const log = (message: string) => process.stderr.write(`${message}\n`);

/** The backup and restore commands, loaded when one runs: serving needs none of their archive and COPY packages. */
const backupCommands = () => import('../backup/commands.ts');

/**
 * Opens the configured database for one command, set up as a starting service sets it up (under the set-up lock,
 * P166: migrations, sealing of plain secrets, pg-boss's schema), with the operator key (SECRET_KEY or
 * `<DATA_DIR>/secret-key`, as the service uses), and returns it with its release function.
 */
async function openDatabase(
  config: Config,
): Promise<{ database: Database; secrets: SecretBox; release: () => Promise<void> }> {
  const reached = await reachDatabase(config, log, true);
  const url = reached.url;
  const secrets = new SecretBox(await loadOperatorKey(config.secretKey, config.dataDir));
  const database = createDatabase(url, 2);
  try {
    await withSetUpLock(url, () => setUpDatabase(database, secrets), { log });
  } catch (error) {
    await database.close();
    await reached.release();
    throw error;
  }
  return {
    database,
    secrets,
    release: async () => {
      await database.close();
      await reached.release();
    },
  };
}

/** Runs one read on the database and prints its JSON result. */
function databaseCommand<A extends unknown[]>(run: (db: Database['db'], ...args: A) => Promise<unknown>) {
  return async (...args: A) => {
    const { database, release } = await openDatabase(loadConfig());
    try {
      process.stdout.write(`${JSON.stringify(await run(database.db, ...args), null, 2)}\n`);
    } finally {
      await release();
    }
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

const program = new Command('seller-ops')
  .description('seller-ops: the HTTP service and the operator commands of its admin API (decision D1.4)')
  .version(SERVICE_VERSION, '-v, --version', 'print the version and exit')
  .showHelpAfterError();

program
  .command('serve', { isDefault: true })
  .description('start the HTTP service (embedded PostgreSQL in DATA_DIR unless DATABASE_URL is set)')
  .action(() => runUntilSignalled(loadConfig()));

program
  .command('migrate')
  .description(
    "set the database up for this version and exit: migrations, pg-boss's schema, sealing of plain secrets (under the set-up lock)",
  )
  .action(async () => {
    const { release } = await openDatabase(loadConfig());
    await release();
    log('migrations applied');
  });

program
  .command('backup')
  .description(
    'write a consistent snapshot of the database and the operator key into one compressed archive, while the service runs or not (docs/operations.md)',
  )
  .option(
    '--out <file>',
    'the archive to write; - = standard output (default seller-ops-backup-<UTC time>.tar.gz)',
  )
  .option(
    '--without-secret-key',
    'leave the operator key out (sealed credentials then need the key kept elsewhere)',
  )
  .action(async (options: { out?: string; withoutSecretKey?: boolean }) =>
    (await backupCommands()).backupCommand(options),
  );

program
  .command('restore <file>')
  .description(
    'restore an archive of `backup` into an empty DATA_DIR (service stopped) or an empty DATABASE_URL database',
  )
  .option(
    '--force',
    "replace the rows the target database holds (its schema must be at the archive's version or older)",
  )
  .action(async (file: string, options: { force?: boolean }) =>
    (await backupCommands()).restoreCommand(file, options),
  );

program
  .command('sandbox [names...]')
  .description(
    'start the sandbox servers of the external systems (all, or the named ones) on their loopback ports until interrupted',
  )
  .option('--host <host>', 'interface to bind', '127.0.0.1')
  .action(async (names: string[], options: { host: string }) => {
    const unknown = names.filter((name) => !SANDBOXES.some((definition) => definition.name === name));
    if (unknown.length > 0)
      throw new Error(
        `unknown sandbox ${unknown.join(', ')}; known: ${SANDBOXES.map((s) => s.name).join(', ')}`,
      );
    const chosen = SANDBOXES.filter((definition) => names.length === 0 || names.includes(definition.name));
    const servers: SandboxServer[] = [];
    for (const definition of chosen) {
      const server = await serveSandbox(definition, { host: options.host, port: definition.defaultPort });
      servers.push(server);
      log(
        `${definition.name}: ${server.url}  (${PROVIDER_URL_VARIABLES[definition.urlSetting]}=${server.url})`,
      );
    }
    if (servers.length === 0) log('no sandbox to start');
    else log('set these variables in every instance of the service that should share these sandboxes');
    if (servers.length > 0)
      await new Promise<void>((resolve) => {
        const stop = () => void Promise.all(servers.map((server) => server.close())).then(() => resolve());
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
  });

const client = program.command('client').description('clients (accounts): create, update, list');
client
  .command('create')
  .description('create a client; prints it as JSON')
  .requiredOption('--name <name>', 'client name')
  .option(
    '--subscription-expires-at <date-time>',
    'end of the paid subscription, ISO 8601 (D1.3); none = never',
  )
  .action(
    accountCommand((accounts, options: { name: string; subscriptionExpiresAt?: string }) =>
      accounts.createClient(options),
    ),
  );
client
  .command('update <clientId>')
  .description('rename a client or change its subscription end')
  .option('--name <name>', 'new client name')
  .option('--subscription-expires-at <date-time>', 'ISO 8601 date-time, or "none" for no end')
  .action(
    accountCommand((accounts, clientId: string, options: { name?: string; subscriptionExpiresAt?: string }) =>
      accounts.updateClient(id(clientId), {
        name: options.name,
        subscriptionExpiresAt:
          options.subscriptionExpiresAt === 'none' ? null : options.subscriptionExpiresAt,
      }),
    ),
  );
client
  .command('list')
  .description('list every client')
  .action(databaseCommand((db) => listClients(db)));

const organization = program.command('organization').description('organizations of a client: create, list');
organization
  .command('create')
  .description('create an organization of a client')
  .requiredOption('--client <clientId>', 'id of the client')
  .requiredOption('--name <name>', 'organization name')
  .option('--inn <inn>', 'taxpayer number')
  .action(
    accountCommand((accounts, options: { client: string; name: string; inn?: string }) =>
      accounts.createOrganization(id(options.client), options),
    ),
  );
organization
  .command('list')
  .description('list the organizations of a client')
  .requiredOption('--client <clientId>', 'id of the client')
  .action(databaseCommand((db, options: { client: string }) => listOrganizations(db, id(options.client))));

const user = program.command('user').description('users of a client: create, list');
user
  .command('create')
  .description('create a user of a client (tokens belong to users)')
  .requiredOption('--client <clientId>', 'id of the client')
  .requiredOption('--name <name>', 'user name (shown as createdUser)')
  .addOption(
    new Option('--lang <lang>', 'language of error messages; unset = ru (spec §5.4)').choices(['ru', 'en']),
  )
  .addOption(
    new Option('--role <role>', 'role; SUPPORT is refused analytics (D2.4)')
      .choices(['OWNER', 'ADMIN', 'MANAGER', 'SUPPORT'])
      .default('OWNER'),
  )
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
user
  .command('list')
  .description('list the users of a client')
  .requiredOption('--client <clientId>', 'id of the client')
  .action(databaseCommand((db, options: { client: string }) => listUsers(db, id(options.client))));

const token = program.command('token').description('API tokens of a user: create, revoke, list');
token
  .command('create')
  .description('create a token; the token is printed only this once (stored hashed)')
  .requiredOption('--user <userId>', 'id of the user the token belongs to')
  .addOption(
    new Option('--access <access>', 'READ (GET only) or WRITE')
      .choices(['READ', 'WRITE'])
      .makeOptionMandatory(),
  )
  .option('--name <name>', 'a label, e.g. "ERP sync"')
  .action(
    accountCommand((accounts, options: { user: string; access: 'READ' | 'WRITE'; name?: string }) =>
      accounts.createToken(id(options.user), options),
    ),
  );
token
  .command('revoke <tokenId>')
  .description('revoke a token; every process refuses it at once')
  .action(accountCommand((accounts, tokenId: string) => accounts.revokeToken(id(tokenId))));
token
  .command('list')
  .description('list the tokens of a user (ids, access, names and dates; never the token)')
  .requiredOption('--user <userId>', 'id of the user')
  .action(databaseCommand((db, options: { user: string }) => listTokens(db, id(options.user))));

program
  .command('integration')
  .description('prepared marketplace integrations (D1.4)')
  .command('set')
  .description("store an organization's marketplace API key for one service (sealed at rest)")
  .requiredOption('--organization <organizationId>', 'id of the organization')
  .requiredOption('--service <service>', 'service, e.g. SERVICE_01 (Market1)')
  .requiredOption('--api-key <apiKey>', 'the marketplace API key')
  .option('--base-url <url>', 'the marketplace API address; default MARKET1_API_URL or the sandbox')
  .action(
    accountCommand(
      (accounts, options: { organization: string; service: string; apiKey: string; baseUrl?: string }) =>
        accounts.setIntegration(id(options.organization), options),
    ),
  );

program
  .command('cash-register')
  .description('fiscal provider settings of an organization (D8.1)')
  .command('set')
  .description("store an organization's cash-register provider credentials (password sealed at rest)")
  .requiredOption('--organization <organizationId>', 'id of the organization')
  .addOption(
    new Option('--service <service>', 'the provider')
      .choices(['CASH_REGISTER_A', 'CASH_REGISTER_B'])
      .makeOptionMandatory(),
  )
  .requiredOption('--login <login>', 'provider login')
  .requiredOption('--password <password>', 'provider password')
  .option('--base-url <url>', 'provider address; default CASH_REGISTER_A_URL / _B_URL or the sandbox')
  .option('--group-code <code>', 'CASH_REGISTER_A: group of cash registers; default the login')
  .option('--inn <inn>', "taxpayer number on receipts (10 or 12 digits); default the organization's")
  .option(
    '--email <email>',
    'sender of the receipts, also the buyer contact sent (CASH_REGISTER_A: required)',
  )
  .option('--payment-address <address>', 'place of settlement, e.g. the shop URL (CASH_REGISTER_A: required)')
  .addOption(
    new Option('--taxation-system <system>', 'taxation system of the receipts (required)').choices(
      TAXATION_SYSTEMS,
    ),
  )
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
          groupCode?: string;
          inn?: string;
          email?: string;
          paymentAddress?: string;
          taxationSystem?: TaxationSystem;
        },
      ) => accounts.setCashRegister(id(options.organization), options),
    ),
  );

program
  .command('dictionary')
  .description('marketplace dictionaries served by /knowledge/getParams and /option/fetchOption (D11.3)')
  .command('load <file>')
  .description(
    'load a dictionary file (JSON, see docs/catalog.md); "sample" loads the shipped sample dictionary',
  )
  .action(
    databaseCommand(async (db, file: string) => {
      const dictionary =
        file === 'sample' ? sampleDictionary() : (JSON.parse(readFileSync(file, 'utf8')) as unknown);
      if (!Value.Check(DictionaryFile, dictionary)) {
        const [first] = Value.Errors(DictionaryFile, dictionary);
        throw new Error(`not a dictionary file: ${first?.instancePath ?? ''} ${first?.message ?? ''}`.trim());
      }
      return db.transaction().execute((trx) => loadDictionary(trx, dictionary));
    }),
  );

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof AppError) log(`${error.code}: ${renderMessage(error.code, 'en', error.params)}`);
  else log(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
}
