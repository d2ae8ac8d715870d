/**
 * The campaign operations work out of the box (P109): the service as `npm start` runs it (embedded PostgreSQL in a
 * fresh DATA_DIR, the demo account, the Market1 sandbox started on loopback) gives the demo organization a
 * Market1 integration, so the balance and the subjects answer
 * (an import then runs at the sandbox's published rate limits: minutes, P102).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useFreshService } from '../helpers/service-process.ts';

const service = useFreshService('campaign-demo', { MARKET1_API_URL: '' });

describe('the demo organization on a fresh service', () => {
  it('reaches the Market1 sandbox: balance and subjects', async () => {
    const url = service.url;
    const demo = JSON.parse(await readFile(path.join(service.dataDir, 'demo-credentials.json'), 'utf8')) as {
      organizationId: number;
      readToken: string;
    };
    const query = `organizationId=${demo.organizationId}&service=SERVICE_01`;
    const get = (operation: string) =>
      fetch(`${url}/api/campaign/${operation}?${query}`, { headers: { authorization: demo.readToken } });
    const balance = await get('getCampaignBalance');
    expect(balance.status, await balance.clone().text()).toBe(200);
    expect(await balance.json()).toEqual({
      balance: expect.any(Number) as number,
      net: expect.any(Number) as number,
      bonus: expect.any(Number) as number,
    });
    const subjects = await fetch(
      `${url}/api/campaign/getMarket1Subjects?organizationId=${demo.organizationId}&query=&limit=3`,
      {
        headers: { authorization: demo.readToken },
      },
    );
    expect(subjects.status, await subjects.clone().text()).toBe(200);
    expect(await subjects.json()).toHaveLength(3);
  });
});
