/**
 * What compression and the ETag check cost on the single GET (P136): `GET /api/inbound/{id}`
 * of a document with 50 positions, answered from the service's response cache, at 10 connections (autocannon,
 * with Node's CPU per request) with `Accept-Encoding` absent, `gzip` and `br`, and with a matching
 * `If-None-Match` (304, no body). Bytes per answer are the body as sent, read once over a raw socket.
 */
import http from 'node:http';
import { createFiftyProductDocument } from './inbound.ts';
import {
  cpuMs,
  formatMs,
  formatNumber,
  runLoad,
  type BenchContext,
  type BenchPartResult,
  type BenchRow,
  noFailures,
} from './lib.ts';

const LOAD_CONNECTIONS = 10;
const WARMUP_SECONDS = 1;

interface Scenario {
  name: string;
  headers: Record<string, string>;
  /** The status every answer must have. */
  status: number;
}

/** One raw answer: status, headers and the body bytes exactly as sent (no decoding). */
function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; etag: string | undefined; bytes: number }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (response) => {
        let bytes = 0;
        response.on('data', (chunk: Buffer) => (bytes += chunk.length));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, etag: response.headers.etag, bytes }),
        );
      })
      .on('error', reject);
  });
}

/** Runs the compression and conditional-GET part of the bench against the service of `context`. */
export async function benchConditional(
  context: BenchContext,
  log: (line: string) => void,
): Promise<BenchPartResult> {
  const orderId = await createFiftyProductDocument(context, 'Conditional');
  const url = `${context.serviceUrl}/api/inbound/${orderId}`;
  const authorization = { authorization: context.readToken };
  const { etag } = await rawGet(url, authorization);
  if (etag === undefined) throw new Error(`GET ${url} carries no ETag`);
  const scenarios: Scenario[] = [
    { name: 'identity (no Accept-Encoding)', headers: {}, status: 200 },
    { name: 'gzip', headers: { 'accept-encoding': 'gzip' }, status: 200 },
    { name: 'br', headers: { 'accept-encoding': 'br' }, status: 200 },
    { name: 'If-None-Match matching (304)', headers: { 'if-none-match': etag }, status: 304 },
  ];
  const rows: BenchRow[] = [];
  let identityRps = 0;
  let wrongAnswers = 0;
  for (const scenario of scenarios) {
    log(`conditional: GET /api/inbound/{id}, ${scenario.name}`);
    const headers = { ...authorization, ...scenario.headers };
    const sample = await rawGet(url, headers);
    if (sample.status !== scenario.status) wrongAnswers++;
    const load = { url, headers, connections: LOAD_CONNECTIONS };
    await runLoad({ ...load, seconds: WARMUP_SECONDS });
    const before = cpuMs([context.servicePid]);
    const measured = await runLoad({ ...load, seconds: context.loadSeconds });
    const nodeCpu = (cpuMs([context.servicePid]) - before) / measured.requests;
    // autocannon counts every non-2xx answer as a failure, the expected 304 included.
    if (scenario.status === 200) wrongAnswers += measured.failures;
    if (rows.length === 0) identityRps = measured.rps;
    const ratio = rows.length === 0 ? '' : `; ${formatNumber(measured.rps / identityRps, 2)}× identity`;
    rows.push({
      name: `GET /api/inbound/{id} (50 products), ${scenario.name}`,
      value: `${formatNumber(measured.rps)} req/s, p50 ${measured.p50} ms, p99 ${measured.p99} ms${ratio}`,
      detail: `${formatNumber(sample.bytes)} body bytes per answer; Node CPU per request ${formatMs(nodeCpu)}`,
    });
  }
  return {
    title: 'Compression and conditional GET',
    rows,
    targets: [noFailures('every answer had its expected status (200, or 304 on a match)', wrongAnswers)],
  };
}
