/**
 * Which word of a search text drives a trigram index scan (P195), and whether a page reads the index (P214).
 *
 * A GIN trigram scan for `ILIKE '%text%'` reads the posting list of every trigram of the text; a word that most
 * rows contain ("product" in "product 1234") makes it read nearly the whole index although few rows match. So a
 * search filters by the full pattern (not indexable, `texticlike`, the function behind `ILIKE`) and lets the
 * index find the rows containing its rarest word only. Which word is rarest is judged as the planner judges a
 * pattern: by the share of the column's statistics sample (`pg_stats`: most common values and histogram bounds)
 * that contains it. The same share decides whether a page is better read through the index at all or by walking
 * the client's rows in the page's order (`trigramLookup`, P214). The answer never depends on the choice, only the
 * cost does.
 */
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { likeContains } from '../../db/like.ts';

/** Columns searched by a trigram index whose sample is consulted. */
export type SampledColumn = 'product.name' | 'product_model.article';

/** A column's sample is read again after this long (statistics change only on ANALYZE). */
const SAMPLE_TTL_MS = 10 * 60_000;
/** pg_trgm extracts no trigram from an unanchored word shorter than this: it could not drive the index. */
const MIN_WORD_LENGTH = 3;

interface Sample {
  values: string[];
  /** the table's estimated row count (`pg_class.reltuples`; 0 when never analyzed) */
  rows: number;
  readAt: number;
}

/** Samples per database handle, so two databases (tests) never share one. */
const samples = new WeakMap<Kysely<DB>, Map<SampledColumn, Promise<Sample>>>();

async function readSample(db: Kysely<DB>, column: SampledColumn): Promise<Sample> {
  const [table, attribute] = column.split('.') as [string, string];
  // pg_stats shows `anyarray` columns; their text form is a valid text[] literal for any element type.
  const result = await sql<{ mcv: string[] | null; histogram: string[] | null; rows: number }>`
    select most_common_vals::text::text[] as mcv, histogram_bounds::text::text[] as histogram,
      greatest((select reltuples from pg_class where oid = to_regclass(${table})), 0)::float8 as rows
    from pg_stats
    where schemaname = current_schema() and tablename = ${table} and attname = ${attribute}`.execute(db);
  const values = result.rows.flatMap((row) => [...(row.mcv ?? []), ...(row.histogram ?? [])]);
  return {
    values: values.map((value) => value.toLowerCase()),
    rows: result.rows[0]?.rows ?? 0,
    readAt: Date.now(),
  };
}

/** The column's statistics sample, lower-cased; read once per `SAMPLE_TTL_MS`. */
async function sampleOf(db: Kysely<DB>, column: SampledColumn): Promise<Sample> {
  const byColumn = samples.get(db) ?? new Map<SampledColumn, Promise<Sample>>();
  samples.set(db, byColumn);
  const cached = byColumn.get(column);
  if (cached !== undefined) {
    const sample = await cached;
    if (Date.now() - sample.readAt < SAMPLE_TTL_MS) return sample;
  }
  // Concurrent searches after the expiry may each read it once; the last read is kept.
  const read = readSample(db, column);
  byColumn.set(column, read);
  // A failed read is not kept: the next search asks again.
  read.catch(() => byColumn.delete(column));
  return read;
}

/** The lower-cased words of `text` pg_trgm can index (letters and digits, at least `MIN_WORD_LENGTH` of them). */
function indexableWords(text: string): string[] {
  return [...new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].filter(
    (word) => word.length >= MIN_WORD_LENGTH,
  );
}

/** Of `words`, the one contained in the fewest of `values` (ties: the longer). */
function rarestWord(words: readonly string[], values: readonly string[]): string | undefined {
  let best: { word: string; share: number } | undefined;
  for (const word of words) {
    const share = values.filter((value) => value.includes(word)).length;
    if (best === undefined || share < best.share || (share === best.share && word.length > best.word.length))
      best = { word, share };
  }
  return best?.word;
}

/**
 * The word of `text` the trigram index of `column` should look up: the one contained in the fewest sampled
 * values (ties: the longer), among the words pg_trgm can index (letters and digits, at least 3 of them).
 * @returns the word, or undefined when no word qualifies, the text is that one word, or the column has no
 *   statistics (a table never analyzed; on Citus the coordinator's, whose statistics live on the workers' shards):
 *   then the full pattern drives the index as it is (P173)
 */
export async function drivingWord(
  db: Kysely<DB>,
  column: SampledColumn,
  text: string,
): Promise<string | undefined> {
  const words = indexableWords(text);
  if (words.length === 0 || (words.length === 1 && words[0] === text.trim().toLowerCase())) return undefined;
  const { values } = await sampleOf(db, column);
  if (values.length === 0) return undefined;
  return rarestWord(words, values);
}

/**
 * How a search reads `column` for the rows containing `text` when it needs at most `reach` of them in the page's
 * order (P214), judged from the column's sample as the planner judges a pattern: with a share `s` of the sample
 * containing the text, walking the client's rows in order reads about `reach / s` rows, the trigram index about
 * `s × rows`.
 * @returns `%word%` (LIKE-escaped) for the index to look up, its rarest indexable word (the text filters what it
 *   finds); undefined to walk the rows in order: the text has no indexable word, or the walk reads fewer rows
 */
export async function trigramLookup(
  db: Kysely<DB>,
  column: SampledColumn,
  text: string,
  reach: number,
): Promise<string | undefined> {
  const words = indexableWords(text);
  if (words.length === 0) return undefined;
  const { values, rows } = await sampleOf(db, column);
  const needle = text.toLowerCase();
  const share =
    values.length === 0 ? 0 : values.filter((value) => value.includes(needle)).length / values.length;
  if (share > 0 && reach / share < share * rows) return undefined;
  return likeContains(rarestWord(words, values) as string);
}
