/**
 * Applies the numbered plain-SQL migrations of `src/db/migrations` (STYLE §7) with Kysely's Migrator, which
 * orders them by name, runs each in a transaction and takes a lock so concurrent processes apply them once.
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
            await sql.raw(text).execute(db);
          },
        };
      }
    }
    return migrations;
  }
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
