/**
 * Applies the numbered plain-SQL migrations of `src/db/migrations` (STYLE §7) with Kysely's Migrator, which
 * orders them by name, runs each in a transaction and takes a lock so concurrent processes apply them once.
 * A file reaches PostgreSQL one command per query (split by PostgreSQL's own parser, `libpg-query`): Citus
 * refuses a multi-command query string that alters a distributed table (docs/scale-out.md, decision P180).
 * Migrations are never edited after they land: add a new numbered file instead.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';

const migrationsDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/** Serves every `NNNN_name.sql` file of the given folders (default: ours) as one migration. */
export class SqlFileMigrationProvider implements MigrationProvider {
  constructor(private readonly folders: readonly string[] = [migrationsDir]) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    const migrations: Record<string, Migration> = {};
    for (const folder of this.folders) {
      const files = (await readdir(folder)).filter((file) => /^\d{4}_.+\.sql$/.test(file));
      for (const file of files) {
        const text = await readFile(path.join(folder, file), 'utf8');
        migrations[file.replace(/\.sql$/, '')] = {
          up: async (db) => {
            for (const command of await splitCommands(text)) await sql.raw(command).execute(db);
          },
        };
      }
    }
    return migrations;
  }
}

/**
 * The commands of an SQL script, in order, each as its own text (comments between commands are left out).
 * Uses the locations PostgreSQL's parser reports (byte offsets into the UTF-8 text), so dollar-quoted bodies,
 * strings and comments holding `;` stay whole. The parser (a WebAssembly module reserving ≈ 130 MiB) is loaded on
 * the first call, so a start with no pending migration never loads it.
 * @throws the parser's syntax error (with its position) for a script PostgreSQL would refuse
 */
export async function splitCommands(text: string): Promise<string[]> {
  const { parse } = await import('libpg-query');
  const bytes = Buffer.from(text, 'utf8');
  const { stmts = [] } = await parse(text);
  return stmts.map((statement) => {
    const start = statement.stmt_location ?? 0;
    // A length of 0 (or none) means "to the end of the script".
    const end = statement.stmt_len ? start + statement.stmt_len : bytes.length;
    return bytes.subarray(start, end).toString('utf8').trim();
  });
}

/**
 * Brings the schema to the latest migration. Processes starting together take the set-up lock around this
 * (`set-up-lock.ts`); Kysely's own lock covers a caller that does not.
 * @param extraFolders folders of further migrations after ours (a test's pending migration)
 * @returns the names of the migrations applied by this call
 * @throws the first failing migration's error (that migration is rolled back)
 */
export async function migrateToLatest(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run before any typed schema exists
  db: Kysely<any>,
  extraFolders: readonly string[] = [],
): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: new SqlFileMigrationProvider([migrationsDir, ...extraFolders]),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(`migration failed: ${JSON.stringify(error)}`);
  return (results ?? [])
    .filter((result) => result.status === 'Success')
    .map((result) => result.migrationName);
}
