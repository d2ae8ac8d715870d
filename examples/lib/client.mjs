/**
 * What every example needs from a running seller-ops service (plain Node 20 with the global `fetch`, no
 * dependencies): its address, a wait until it is ready, the credentials, and an API call that ends the example
 * with the service's error.
 *
 * Settings (environment):
 *   SELLER_OPS_URL              service address, default http://127.0.0.1:8080
 *   SELLER_OPS_TOKEN            a WRITE token
 *   SELLER_OPS_ORGANIZATION_ID  the organization to work with
 * When SELLER_OPS_TOKEN is not set, the demo credentials of a local service are read from
 * `${DATA_DIR:-./data}/demo-credentials.json` (written on the service's first start).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Waits up to 60 s for the service's `GET /ready` (so `npm start & node examples/….mjs` works on a fresh machine:
 * the first start initialises the embedded database and writes the demo credentials), then reads the credentials.
 * @param name the example's name, which starts every failure message
 * @returns `{baseUrl, token, organizationId, api, findOrCreate, fail}`; `api(method, pathAndQuery, body?)`
 *   resolves with the parsed JSON body (undefined for an empty one) and exits the process on any error
 */
export async function connect(name) {
  const baseUrl = (process.env.SELLER_OPS_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');

  /** Prints the failure and exits with status 1. */
  const fail = (message) => {
    console.error(`${name} failed: ${message}`);
    process.exit(1);
  };

  const deadline = Date.now() + 60_000;
  let told = false;
  while (!(await isReady(baseUrl))) {
    if (Date.now() > deadline) fail(`the service at ${baseUrl} did not become ready within 60 s`);
    if (!told) console.log(`Waiting for the service at ${baseUrl} …`);
    told = true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }

  const { token, organizationId } = await loadCredentials(fail);

  const api = async (method, pathAndQuery, body) => {
    let response;
    try {
      response = await fetch(baseUrl + pathAndQuery, {
        method,
        headers: {
          authorization: token,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      fail(
        `${method} ${pathAndQuery}: cannot reach the service (${error.cause?.code ?? error.cause?.message ?? error.message})`,
      );
    }
    const text = await response.text();
    const parsed = text === '' ? undefined : JSON.parse(text);
    if (!response.ok) {
      const detail = parsed?.error
        ? `${parsed.error}: ${parsed.localMessage} ${JSON.stringify(parsed.params ?? {})}`
        : text.slice(0, 300);
      fail(`${method} ${pathAndQuery} → ${response.status} ${detail}`);
    }
    return parsed;
  };

  /** Finds a brand or category by its name (case-insensitive), or creates it from `body` (`{name, …}`). */
  const findOrCreate = async (kind, body) => {
    const found = await api('GET', `/api/${kind}/find?query=${encodeURIComponent(body.name)}&limit=500`);
    return (
      found.rows.find((row) => row.name.toLowerCase() === body.name.toLowerCase()) ??
      api('POST', `/api/${kind}`, body)
    );
  };

  return { baseUrl, token, organizationId, api, findOrCreate, fail };
}

/** Whether the service answers `GET /ready` with 200. */
async function isReady(baseUrl) {
  try {
    return (await fetch(`${baseUrl}/ready`)).ok;
  } catch {
    return false; // not listening yet
  }
}

/** Token and organization from the environment, else from a local service's demo credentials. */
async function loadCredentials(fail) {
  if (process.env.SELLER_OPS_TOKEN) {
    const organizationId = Number(process.env.SELLER_OPS_ORGANIZATION_ID);
    if (!Number.isSafeInteger(organizationId) || organizationId <= 0)
      fail('set SELLER_OPS_ORGANIZATION_ID to an organization id with SELLER_OPS_TOKEN');
    return { token: process.env.SELLER_OPS_TOKEN, organizationId };
  }
  const file = path.resolve(process.env.DATA_DIR ?? './data', 'demo-credentials.json');
  try {
    const demo = JSON.parse(await readFile(file, 'utf8'));
    console.log(`(SELLER_OPS_TOKEN not set: using the demo account from ${file})`);
    return { token: demo.writeToken, organizationId: demo.organizationId };
  } catch {
    fail(`set SELLER_OPS_TOKEN and SELLER_OPS_ORGANIZATION_ID (no demo credentials at ${file})`);
  }
}
