/**
 * Requests that succeeded, per operation (P141): the fixture's requests and every fuzzed request answered with
 * a 2xx are kept, and later plans start from one of them (then draw ids and mutate it) as often as from a
 * generated request. Rules the schemas cannot tell a generator (a webhook's event kinds, a document's dates)
 * are met by requests seen to succeed, so their mutations reach the code behind validation.
 */

/** The parameters and body of a request, before it is written as a URL and a payload. */
export interface RequestValues {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  header: Record<string, unknown>;
  /** `undefined` = no body. */
  body?: unknown;
}

/** How many successful requests are kept per operation (the newest replace the oldest). */
const KEPT_PER_OPERATION = 32;

/** Successful requests by operation key. */
export class Corpus {
  private readonly entries = new Map<string, { kept: RequestValues[]; next: number }>();

  /** Keeps a copy of `values`, a request of `operationKey` that succeeded. */
  add(operationKey: string, values: RequestValues): void {
    let entry = this.entries.get(operationKey);
    if (!entry) this.entries.set(operationKey, (entry = { kept: [], next: 0 }));
    entry.kept[entry.next] = structuredClone(values);
    entry.next = (entry.next + 1) % KEPT_PER_OPERATION;
  }

  /** A copy of a kept request of `operationKey` chosen by `draw` in [0, 1), or undefined when none is kept. */
  pick(operationKey: string, draw: number): RequestValues | undefined {
    const kept = this.entries.get(operationKey)?.kept ?? [];
    const chosen = kept[Math.floor(draw * kept.length)];
    return chosen && structuredClone(chosen);
  }

  /** How many operations have kept requests (report). */
  get size(): number {
    return this.entries.size;
  }
}
