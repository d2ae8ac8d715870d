/**
 * `examples/receiving-day.ts` works out of the box: against the service as `npm start` runs it (embedded
 * PostgreSQL in a fresh DATA_DIR, the demo account), it creates the catalog cards of the invoice, receives the
 * document, packs three cargo places with one short-packed line, fixes the divergence, finishes the document,
 * removes its stock and prints the history.
 */
import { describe, expect, it } from 'vitest';
import { runExample, useFreshService } from '../helpers/service-process.ts';

const service = useFreshService('receiving-day-example');

describe('examples/receiving-day.ts on a fresh service', () => {
  it('plays the whole receiving day', async () => {
    const stdout = await runExample('receiving-day.ts', service);
    expect(stdout).toMatch(/Done: document #\d+ received, fixed, finished and its stock removed\./);
  });
});
