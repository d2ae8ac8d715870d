/**
 * Fuzzing from the OpenAPI document (P140–P145), a bounded sample of `npm run fuzz`: every
 * operation of `/openapi.json` gets generated valid and invalid requests — five per operation with a fixed seed
 * and five with a random seed (printed, replay it with `npm run fuzz -- --seed <seed>`) — and no answer may be
 * a 5xx, an error outside `{error, localMessage, params}` or a success outside its documented schema. Nothing is
 * skipped and no operation goes without requests.
 */
import os from 'node:os';
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_SECRET_KEY, testDatabaseUrl } from '../helpers/test-app.ts';
import { openFuzzTarget, type FuzzTarget } from '../../scripts/fuzz/target.ts';
import { listOperations, type OpenApiDocument } from '../../scripts/fuzz/openapi.ts';
import { runFuzz } from '../../scripts/fuzz/runner.ts';
import { renderText, unexercised } from '../../scripts/fuzz/report.ts';

/** The seed every run checks, so a regression shows up the same way each time. */
const FIXED_SEED = 20_261_123;
const REQUESTS_PER_OPERATION = 5;

let target: FuzzTarget;
let operationCount: number;
beforeAll(async () => {
  // The operator key is the test runs' own; nothing is written to the data directory.
  target = await openFuzzTarget(testDatabaseUrl(), TEST_SECRET_KEY, os.tmpdir());
  const document = (await target.app.inject('/openapi.json')).json<OpenApiDocument>();
  operationCount = listOperations(document).operations.length;
});
afterAll(async () => {
  await target?.close();
});

describe('fuzzing every operation of /openapi.json', () => {
  for (const [name, seed] of [
    ['the fixed seed', FIXED_SEED],
    ['a random seed', randomInt(0, 2 ** 31 - 1)],
  ] as const) {
    it(`answers generated requests within the model (${name})`, async () => {
      process.stdout.write(`fuzz test with ${name}: ${seed} (npm run fuzz -- --seed ${seed})\n`);
      const report = await runFuzz({
        app: target.app,
        runtime: target.runtime,
        seed,
        requests: operationCount * REQUESTS_PER_OPERATION,
      });
      const text = renderText(report);
      expect(report.skipped, text).toEqual([]);
      expect(unexercised(report), text).toEqual([]);
      expect(report.failures, text).toEqual([]);
      expect(report.violations).toEqual({ '5xx': 0, 'outside-model': 0, 'no-answer': 0 });
      // The sample is not all refusals: valid requests reach the handlers and succeed.
      expect(report.statuses['200'] ?? 0, text).toBeGreaterThan(operationCount / 2);
    });
  }
});
