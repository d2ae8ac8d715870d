/**
 * Text searches take turns (P211). A page that matches a text (`query`, inbound's `product` and
 * `containsArticle`) is CPU-bound in PostgreSQL: planned for its pattern on every call (P202) and reading its
 * trigram indexes. Ten at once meant ten backends sharing the machine's cores with Node and with each other, each
 * sliced by the kernel, and every page finished late together. A process runs at most `SEARCH_CONCURRENCY` of them
 * at once; the others wait in arrival order, before they take a pool connection, so the pool stays free for
 * everything else. The campaign statistics reads have their own turns (P156).
 */
import pLimit, { type LimitFunction } from 'p-limit';

/** The turns of one process's text searches. */
export class SearchTurns {
  readonly #limit: LimitFunction;

  /** @param concurrency searches run at once (`SEARCH_CONCURRENCY`), at least 1 */
  constructor(concurrency: number) {
    this.#limit = pLimit(concurrency);
  }

  /**
   * Runs `read` (every statement of one page: its rows and, when asked, its count) in its turn when `searching`,
   * at once when not.
   * @returns what `read` returns; rejects as `read` does
   */
  run<T>(searching: boolean, read: () => Promise<T>): Promise<T> {
    return searching ? this.#limit(read) : read();
  }
}
