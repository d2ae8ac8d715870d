/**
 * The conformance checker itself (`openapi-conformance.ts`): it fails on requests and answers that leave the
 * marketplace's published protocol — the deprecated operations the connector used to call, missing or
 * undocumented parameters, values outside a schema, timestamps without an offset, properties a closed schema
 * refuses, undocumented statuses and media types — both on made-up exchanges and on live traffic of the sandbox.
 * The mapping of values the document does not list to `UNKNOWN` is here too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMarket1Sandbox } from '../../src/connectors/market1/sandbox.ts';
import type { SandboxServer } from '../../src/connectors/sandboxes.ts';
import {
  campaignStatusOf,
  campaignTypeOf,
  marketplaceDay,
  paymentTypeOf,
} from '../../src/connectors/market1/protocol.ts';
import { conformanceRecorder, market1Conformance, type Exchange } from './openapi-conformance.ts';

const JSON_TYPE = 'application/json; charset=utf-8';

/** An exchange with an empty request and a 200 JSON answer, overridden by `fields`. */
function exchange(fields: Partial<Exchange> & { answer?: unknown }): Exchange {
  const { answer, ...rest } = fields;
  return {
    method: 'GET',
    path: '/',
    query: {},
    requestContentType: undefined,
    requestBody: undefined,
    status: 200,
    responseContentType: JSON_TYPE,
    responseText: answer === undefined ? '' : JSON.stringify(answer),
    ...rest,
  };
}

const campaign = {
  id: 1234567,
  bid_type: 'unified',
  status: 9,
  settings: { name: 'Linen', payment_type: 'cpm', placements: { search: true, recommendations: true } },
  nm_settings: [
    {
      nm_id: 12345678,
      subject: { id: 105, name: 'Shirts' },
      bids_kopecks: { search: 25000, recommendations: 25000 },
    },
  ],
  timestamps: {
    created: '2025-08-28T09:50:57.611559+03:00',
    updated: '2025-09-10T10:14:58.475499+03:00',
    started: null,
    deleted: '2100-01-01T00:00:00+03:00',
  },
};

describe('the checker refuses what leaves the published protocol', () => {
  const check = (value: Exchange) => market1Conformance().check(value);

  it('passes a documented exchange', () => {
    expect(
      check(
        exchange({
          path: '/api/advert/v2/adverts',
          query: { ids: '1234567' },
          answer: { adverts: [campaign] },
        }),
      ),
    ).toEqual([]);
  });

  it('refuses the operations the connector used to call: deprecated or gone', () => {
    expect(
      check(
        exchange({
          method: 'POST',
          path: '/adv/v2/fullstats',
          requestContentType: 'application/json',
          requestBody: [{ id: 1, interval: { begin: '2025-09-01', end: '2025-09-07' } }],
          answer: [],
        }),
      ),
    ).toContain('POST /adv/v2/fullstats: the operation is deprecated');
    expect(
      check(
        exchange({
          method: 'POST',
          path: '/adv/v1/promotion/adverts',
          requestContentType: 'application/json',
          requestBody: [1],
          answer: [],
        }),
      ),
    ).toContain('POST /adv/v1/promotion/adverts: the operation is deprecated');
    expect(check(exchange({ method: 'POST', path: '/adv/v1/save-ad' }))).toEqual([
      'POST /adv/v1/save-ad: no such operation in the documents',
    ]);
  });

  it('refuses missing, undocumented and out-of-schema parameters and request bodies', () => {
    const statistics = check(
      exchange({
        path: '/adv/v3/fullstats',
        query: { ids: '1', beginDate: '2025-09-31', interval: '7' },
        answer: [],
      }),
    );
    expect(statistics).toEqual(
      expect.arrayContaining([
        'GET /adv/v3/fullstats: query parameter interval is not documented',
        'GET /adv/v3/fullstats: required query parameter endDate is missing',
        expect.stringMatching(
          /^GET \/adv\/v3\/fullstats: query parameter beginDate=2025-09-31: .*format "date"/,
        ),
      ]),
    );
    const create = check(
      exchange({
        method: 'POST',
        path: '/adv/v2/seacat/save-ad',
        requestContentType: 'application/json',
        requestBody: { name: 'Linen', nms: ['12345678'], bid_type: 'auto' },
        answer: 1234567,
      }),
    );
    expect(create).toEqual([
      expect.stringMatching(/request body: .*must be integer.*must be equal to one of/),
    ]);
    expect(check(exchange({ path: '/adv/v0/start', query: { id: 'abc' } }))).toEqual([
      expect.stringMatching(/query parameter id=abc: .*must be integer/),
    ]);
  });

  it('refuses answers outside the schema: unknown status codes, missing fields, timestamps without offset', () => {
    const answer = {
      adverts: [
        { ...campaign, status: 12 },
        { ...campaign, timestamps: { ...campaign.timestamps, created: '2025-08-28T09:50:57' } },
        { ...campaign, settings: undefined },
      ],
    };
    const violations = check(exchange({ path: '/api/advert/v2/adverts', answer }));
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatch(/adverts\/0\/status must be equal to one of the allowed values/);
    expect(violations[0]).toMatch(/adverts\/1\/timestamps\/created must match format "date-time"/);
    expect(violations[0]).toMatch(/adverts\/2 must have required property 'settings'/);
  });

  it('refuses properties a closed schema does not list, undocumented statuses and media types', () => {
    // The statistics request the connector used to send closes its items (`RequestWithCampaignID`).
    expect(
      check(
        exchange({
          method: 'POST',
          path: '/adv/v2/fullstats',
          requestContentType: 'application/json',
          requestBody: [{ id: 1, extra: 2 }],
          answer: [],
        }),
      ),
    ).toContainEqual(expect.stringMatching(/request body: .*body\/0 must NOT have additional properties/));
    expect(check(exchange({ path: '/adv/v1/balance', status: 404, answer: { error: 'no' } }))).toEqual([
      'GET /adv/v1/balance: answer status 404 is not documented',
    ]);
    // The 422 of a status change is text/plain in the document.
    expect(
      check(exchange({ path: '/adv/v0/pause', query: { id: '1' }, status: 422, answer: { error: 'no' } })),
    ).toEqual([
      expect.stringMatching(/answer 422 media type application\/json is not documented \(text\/plain\)/),
    ]);
    expect(
      check(
        exchange({
          path: '/adv/v0/pause',
          query: { id: '1' },
          status: 422,
          responseContentType: 'text/plain; charset=utf-8',
          responseText: 'Статус кампании не изменен',
        }),
      ),
    ).toEqual([]);
  });
});

describe("a body's oneOf: the alternative its properties name (P179)", () => {
  const check = (answer: unknown) =>
    market1Conformance().check(
      exchange({ path: '/api/v1/tariffs/commission', query: { locale: 'ru' }, answer }),
    );
  const row = { parentID: 657, parentName: 'Home', subjectID: 6461, subjectName: 'Dental equipment' };
  const russia = {
    ...row,
    kgvpBooking: 14.5,
    kgvpMarketplace: 15.5,
    kgvpPickup: 14.5,
    kgvpSupplier: 12.5,
    kgvpSupplierExpress: 3,
    paidStorageKgvp: 15.5,
  };

  it('passes each alternative of the commission report as the document gives it', () => {
    expect(check({ report: [russia] })).toEqual([]);
    expect(check({ report: [{ ...row, kgvpChina: 15.5 }] })).toEqual([]);
    expect(check({ report: [{ ...row, kgvpUAE: 15.5 }] })).toEqual([]);
    expect(check({ report: [] })).toEqual([]);
  });

  it('refuses what the named alternative closes, mixed alternatives, and wrong types', () => {
    // `Commission` (Russia) closes its top level; read as anyOf, `CommissionChina` would have let it pass.
    expect(check({ report: [russia], extra: 1 })).toEqual([
      expect.stringMatching(/answer 200: as Commission: body must NOT have additional properties/),
    ]);
    expect(check({ report: [{ ...russia, kgvpChina: 15.5 }] })).toEqual([
      'GET /api/v1/tariffs/commission: answer 200: mixes the properties of Commission and CommissionChina (oneOf)',
    ]);
    expect(check({ report: [{ ...russia, paidStorageKgvp: '15.5' }] })).toEqual([
      expect.stringMatching(/as Commission: body\/report\/0\/paidStorageKgvp must be number/),
    ]);
    // Naming no alternative, a body must suit every one: the Russian one closes the top level.
    expect(check({ report: [], extra: 1 })).toEqual([
      expect.stringMatching(/as Commission: body must NOT have additional properties/),
    ]);
  });
});

describe('live traffic of the sandbox', () => {
  let sandbox: SandboxServer;
  const recorder = conformanceRecorder();
  beforeAll(async () => {
    sandbox = await startMarket1Sandbox({
      host: '127.0.0.1',
      port: 0,
      rateLimits: 'off',
      onExchange: recorder.onExchange,
    });
  });
  afterAll(() => sandbox.close());

  it('is checked too: a request in the old protocol is a violation, the current one is not', async () => {
    const headers = { authorization: 'any key', 'content-type': 'application/json' };
    const day = marketplaceDay(Date.now());
    await fetch(`${sandbox.url}/adv/v2/fullstats`, {
      method: 'POST',
      headers,
      body: JSON.stringify([{ id: 1, interval: { begin: day, end: day } }]),
    });
    expect(recorder.violations()).toEqual([
      'POST /adv/v2/fullstats: the operation is deprecated',
      'POST /adv/v2/fullstats: answer status 404 is not documented',
    ]);
    recorder.exchanges.length = 0;
    const current = await fetch(`${sandbox.url}/adv/v3/fullstats?ids=1&beginDate=${day}&endDate=${day}`, {
      headers: { authorization: 'any key' },
    });
    expect(current.status).toBe(200);
    expect(recorder.violations()).toEqual([]);
  });

  it("answers the documents' error bodies: 400 of details, statistics, create and start, 422 and 429", async () => {
    const key = { authorization: 'another key' };
    const day = marketplaceDay(Date.now());
    const tooMany = Array.from({ length: 51 }, (_, index) => index + 1).join(',');
    const statuses = [
      (
        await fetch(`${sandbox.url}/adv/v3/fullstats?ids=${tooMany}&beginDate=${day}&endDate=${day}`, {
          headers: key,
        })
      ).status,
      (await fetch(`${sandbox.url}/api/advert/v2/adverts?statuses=12`, { headers: key })).status,
      (
        await fetch(`${sandbox.url}/adv/v2/seacat/save-ad`, {
          method: 'POST',
          headers: { ...key, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'x', nms: [1], bid_type: 'manual' }),
        })
      ).status,
      (await fetch(`${sandbox.url}/adv/v0/start?id=1`, { headers: key })).status,
    ];
    expect(statuses).toEqual([400, 400, 400, 400]);
    const { adverts } = (await (
      await fetch(`${sandbox.url}/api/advert/v2/adverts?statuses=7`, { headers: key })
    ).json()) as {
      adverts: { id: number }[];
    };
    const finished = await fetch(`${sandbox.url}/adv/v0/pause?id=${adverts[0]!.id}`, { headers: key });
    expect(finished.status).toBe(422);
    expect(finished.headers.get('content-type')).toMatch(/^text\/plain/);
    await fetch(`${sandbox.url}/__sandbox/rate-limits`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'real' }),
    });
    const balances = [];
    for (let call = 0; call < 6; call += 1)
      balances.push((await fetch(`${sandbox.url}/adv/v1/balance`, { headers: key })).status);
    expect(balances).toEqual([200, 200, 200, 200, 200, 429]);
    // The answers all follow the documents; the one request made outside them on purpose is caught.
    expect(recorder.violations()).toEqual([
      'GET /api/advert/v2/adverts: query parameter statuses=12: data must be equal to one of the allowed values',
    ]);
  });
});

describe('values the document does not list', () => {
  it('map to UNKNOWN', () => {
    expect(campaignStatusOf(12)).toBe('UNKNOWN');
    expect(campaignStatusOf(9)).toBe('ACTIVE');
    expect(campaignTypeOf('auction')).toBe('UNKNOWN');
    expect(campaignTypeOf(undefined)).toBe('UNKNOWN');
    expect([campaignTypeOf('unified'), campaignTypeOf('manual')]).toEqual(['AUTO', 'IN_SEARCH_AND_CATALOG']);
    expect([paymentTypeOf('cpm'), paymentTypeOf('cpc'), paymentTypeOf('cpo')]).toEqual([
      'CPM',
      'CPC',
      'UNKNOWN',
    ]);
  });
});
