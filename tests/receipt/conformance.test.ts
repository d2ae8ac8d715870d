/**
 * The cash-register connectors against the providers' published protocols, mechanically: every request our
 * clients send and every answer the sandboxes give (the sandboxes' exchange log) is checked against the protocol
 * encoded once from the document — provider A: `provider-a/document.ts` (ATOL Online document 5.23: fields, error
 * table with HTTP statuses); provider B: `provider-b/document.ts` (the shape the `cloudpayments` package builds) —
 * and a client we did not write, the `cloudpayments` package itself, registers a receipt on provider B's sandbox.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ClientService, ReceiptTypes, TaxationSystem } from 'cloudpayments';
import {
  answerProblems as answerProblemsA,
  registrationProblems as registrationProblemsA,
  schemaProblems,
  TokenRequest,
} from '../../src/connectors/cash-register/provider-a/document.ts';
import {
  answerProblems as answerProblemsB,
  registrationProblems as registrationProblemsB,
} from '../../src/connectors/cash-register/provider-b/document.ts';
import { registrationBody as registrationBodyA } from '../../src/connectors/cash-register/provider-a/client.ts';
import { ProviderAClient } from '../../src/connectors/cash-register/provider-a/client.ts';
import { fiscalDataOf, ProviderBClient } from '../../src/connectors/cash-register/provider-b/client.ts';
import type { SandboxExchange } from '../../src/connectors/cash-register/sandbox-kit.ts';
import type {
  ProviderAccount,
  ProviderOutcome,
  ReceiptToRegister,
} from '../../src/connectors/cash-register/connector.ts';
import type { ReceiptDetails } from '../../src/connectors/cash-register/provider-b/protocol.ts';
import {
  COMPANY_SETTINGS,
  createDocument,
  newReceipt,
  receiptAccount,
  updateUntil,
  useReceiptApp,
  waitFor,
  type Sandbox,
} from './kit.ts';

const context = useReceiptApp();
const app = () => context.t.app;
const settled = (receipt: { status: string }) => !['CREATED', 'PENDING'].includes(receipt.status);

const exchangesOf = async (sandbox: Sandbox): Promise<SandboxExchange[]> =>
  ((await (await fetch(`${sandbox.url}/__sandbox/exchanges`)).json()) as { exchanges: SandboxExchange[] })
    .exchanges;

const account = (sandbox: Sandbox, login: string): ProviderAccount => ({
  baseUrl: sandbox.url,
  login,
  password: 'any-password',
  groupCode: login,
  company: { ...COMPANY_SETTINGS },
});

const receipt = (externalId: string): ReceiptToRegister => ({
  externalId,
  type: 'INCOME',
  lines: [{ name: 'Ceramic mug', price: 24_990, quantity: 3, sum: 74_970 }],
  total: 74_970,
  createdAt: new Date(),
});

/** Provider A's operation of a sandbox path. */
const operationA = (url: string) =>
  url.endsWith('/getToken') ? 'getToken' : url.includes('/report/') ? 'report' : 'register';

describe('provider A against the ATOL Online document', () => {
  const sandbox = () => context.sandboxes.CASH_REGISTER_A;

  it('flags what leaves the document: the body we sent before (no client, company without email and address)', () => {
    const body = registrationBodyA(account(sandbox(), 'shop'), receipt('1')) as unknown as {
      receipt: Record<string, unknown>;
    };
    expect(registrationProblemsA(body)).toEqual([]);
    const withoutClient = { ...body.receipt, client: undefined, company: { sno: 'usn_income' } };
    expect(
      registrationProblemsA({ ...body, receipt: JSON.parse(JSON.stringify(withoutClient)) as unknown }),
    ).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^receipt\.client:/),
        expect.stringMatching(/^receipt\.company\.email:/),
      ]) as unknown,
    );
    expect(
      answerProblemsA('report', 404, { error: { error_id: 'x', code: 34, text: '', type: 'system' } }),
    ).not.toEqual([]);
  });

  it('sends only requests of the document and gets only answers of the document, through every path we use', async () => {
    await sandbox().settings({ processingMs: 600 });
    try {
      // Through the service: registration, a report before the receipt is known (34), reports until done.
      const owner = await receiptAccount(context, 'CASH_REGISTER_A');
      const order = await createDocument(app(), owner);
      const created = await newReceipt(app(), owner.writeToken, order.id);
      expect(created.status).toBe('PENDING');
      const done = await updateUntil(app(), owner.readToken, created.id, settled);
      expect(done).toMatchObject({ status: 'COMPLETED', providerStatus: 'done' });

      // The client directly: a repeat while processing (33 with the uuid), after processing (the earlier uuid),
      // and the report of an unknown uuid (30: kept pending, asked again).
      const client = new ProviderAClient({ timeoutMs: 2000 });
      try {
        const shop = account(sandbox(), `conformance-${randomUUID()}`);
        const first = await client.register(shop, receipt('42'));
        expect(first).toMatchObject({ kind: 'pending', providerStatus: 'wait' });
        const uuid = (first as { providerReceiptId: string }).providerReceiptId;
        expect(await client.register(shop, receipt('42'))).toMatchObject({
          kind: 'pending',
          providerReceiptId: uuid,
        });
        let completed: ProviderOutcome | undefined;
        await waitFor('the receipt to be fiscalised', async () => {
          completed = await client.status(shop, { externalId: '42', providerReceiptId: uuid });
          return completed.kind === 'completed';
        });
        expect(await client.register(shop, receipt('42'))).toMatchObject({
          kind: 'pending',
          providerReceiptId: uuid,
        });
        expect((await sandbox().documents(42)).find((document) => document.id === uuid)).toMatchObject({
          registrations: 3,
          fiscalisations: 1,
        });
        const unknown = await client.status(shop, { externalId: '43', providerReceiptId: randomUUID() });
        expect(unknown).toMatchObject({
          kind: 'unavailable',
          message: expect.stringMatching(/error 30/) as unknown,
        });
      } finally {
        client.close();
      }
    } finally {
      await sandbox().settings({ processingMs: 100 });
    }

    const exchanges = await exchangesOf(sandbox());
    const codes = new Set(
      exchanges.map((exchange) => (exchange.answer as { error?: { code: number } }).error?.code),
    );
    expect([...codes]).toEqual(expect.arrayContaining([undefined, 30, 33, 34]));
    for (const exchange of exchanges) {
      const operation = operationA(exchange.url);
      const request =
        operation === 'getToken'
          ? schemaProblems(TokenRequest, exchange.request)
          : operation === 'register'
            ? registrationProblemsA(exchange.request)
            : [];
      expect(request, `${exchange.method} ${exchange.url}`).toEqual([]);
      expect(answerProblemsA(operation, exchange.status, exchange.answer), JSON.stringify(exchange)).toEqual(
        [],
      );
    }
  });

  it('refuses what the operator refuses, with the codes and HTTP statuses of its error table', async () => {
    const base = `${sandbox().url}/possystem/v5`;
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    const { token } = (await (await post('/getToken', { login: 'probe', pass: 'anything' })).json()) as {
      token: string;
    };
    const valid = registrationBodyA(account(sandbox(), 'probe'), receipt(`probe-${randomUUID()}`));
    const probes: Array<[string, Response, number]> = [
      ['no token', await post('/probe/sell', valid), 10],
      ['unknown operation', await post('/probe/sell_everything', valid, { token }), 31],
      [
        'no buyer contact',
        await post('/probe/sell', { ...valid, receipt: { ...valid.receipt, client: {} } }, { token }),
        32,
      ],
      [
        'company without payment address',
        await post(
          '/probe/sell',
          {
            ...valid,
            receipt: { ...valid.receipt, company: { ...valid.receipt.company, payment_address: undefined } },
          },
          { token },
        ),
        32,
      ],
      ['not JSON', await post('/probe/sell', '{', { token }), 40],
      ['text/plain', await post('/probe/sell', 'x', { token, 'content-type': 'text/plain' }), 41],
      ['unknown uuid', await fetch(`${base}/probe/report/${randomUUID()}`, { headers: { token } }), 30],
    ];
    await sandbox().fault({ mode: 'credentials', count: 1 });
    probes.push(['refused credentials', await post('/getToken', { login: 'probe', pass: 'anything' }), 12]);
    for (const [label, response, code] of probes) {
      const body = (await response.json()) as { error: { code: number; text: string } };
      expect(body.error.code, label).toBe(code);
      const operation =
        label === 'unknown uuid' ? 'report' : label === 'refused credentials' ? 'getToken' : 'register';
      expect(answerProblemsA(operation, response.status, body), label).toEqual([]);
    }
    const [, missingAddress] = probes[3] as [string, Response, number];
    expect(missingAddress.status).toBe(400);
  });
});

describe('provider B against the cloudpayments package', () => {
  const sandbox = () => context.sandboxes.CASH_REGISTER_B;
  const operationB = (url: string) =>
    url.endsWith('/status/get') ? 'status' : url.endsWith('/receipt/get') ? 'details' : 'register';

  it('sends requests of the package’s shape and reads the fiscal data under Model.AdditionalData', async () => {
    const owner = await receiptAccount(context, 'CASH_REGISTER_B');
    const order = await createDocument(app(), owner);
    const created = await newReceipt(app(), owner.writeToken, order.id);
    const done = await updateUntil(app(), owner.readToken, created.id, settled);
    expect(done).toMatchObject({ status: 'COMPLETED', providerStatus: 'Processed' });
    expect(done.fiscalNumber).toMatch(/^[0-9]+$/);
    expect(done.fiscalDocumentAttribute).toMatch(/^[0-9]+$/);
    expect(done.fnsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/receipt\//);
    for (const exchange of await exchangesOf(sandbox())) {
      const operation = operationB(exchange.url);
      if (operation === 'register') expect(registrationProblemsB(exchange.request), exchange.url).toEqual([]);
      if (exchange.status === 200)
        expect(answerProblemsB(operation, exchange.answer), JSON.stringify(exchange)).toEqual([]);
    }
  });

  it('keeps pending what it cannot read: a processed receipt without fiscal data is never completed with holes', () => {
    const readable = {
      Items: [],
      TaxationSystem: 1,
      AdditionalData: {
        Id: 'x',
        Amount: 1,
        Type: 'Income',
        DocumentNumber: 12,
        SessionNumber: 1,
        FiscalSign: '3449555941',
        FiscalNumber: '9999078902004563',
        RegNumber: '1',
        DateTime: '2026-11-25T12:00:00',
        Url: 'https://receipts.example/x',
        OfdReceiptUrl: null,
      },
    } satisfies ReceiptDetails;
    expect(fiscalDataOf(readable)).toEqual({
      fiscalNumber: '12',
      fiscalDocumentAttribute: '3449555941',
      fiscalStorageNumber: '9999078902004563',
      fnsUrl: 'https://receipts.example/x',
      // Moscow time without an offset.
      completedAt: new Date('2026-11-25T09:00:00Z'),
    });
    // The fields on Model itself (where we read them before) are not the operator's answer.
    const { AdditionalData, ...onModel } = readable;
    const fieldsOnModel: ReceiptDetails = { ...onModel, ...AdditionalData, AdditionalData: null };
    expect(fiscalDataOf(fieldsOnModel)).toBe('Model.AdditionalData');
    expect(fiscalDataOf({ ...readable, AdditionalData: { ...AdditionalData, FiscalSign: '' } })).toBe(
      'AdditionalData.FiscalSign',
    );
  });

  it('accepts the receipts the cloudpayments package builds, and refuses one without Inn as the operator does', async () => {
    const login = `pk_${randomUUID()}`;
    const service = new ClientService({
      publicId: login,
      privateKey: 'any-secret',
      endpoint: sandbox().url,
      org: { inn: 7700000000, taxationSystem: TaxationSystem.SIMPLIFIED_INCOME },
    });
    const answer = await service
      .getReceiptApi()
      .createReceipt(
        { Type: ReceiptTypes.Income, InvoiceId: 'package-1' },
        { Items: [{ label: 'Ceramic mug', price: 249.9, quantity: 3, amount: 749.7, vat: null }] },
      );
    const registered = answer.getResponse() as unknown as { Success: boolean; Model: { Id: string } };
    expect(registered).toMatchObject({ Success: true, Model: { Id: expect.any(String) as unknown } });

    // Our client follows the receipt the package registered to its fiscal data.
    const client = new ProviderBClient({ timeoutMs: 2000 });
    try {
      const shop: ProviderAccount = { ...account(sandbox(), login), password: 'any-secret' };
      let outcome: ProviderOutcome | undefined;
      await waitFor('the package’s receipt to be processed', async () => {
        outcome = await client.status(shop, {
          externalId: 'package-1',
          providerReceiptId: registered.Model.Id,
        });
        return outcome.kind === 'completed';
      });
      expect(outcome).toMatchObject({ kind: 'completed', providerStatus: 'Processed' });
    } finally {
      client.close();
    }

    const withoutInn = await fetch(`${sandbox().url}/kkt/receipt`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`${login}:any-secret`).toString('base64')}`,
        'x-request-id': randomUUID(),
      },
      body: JSON.stringify({
        Type: 'Income',
        CustomerReceipt: { taxationSystem: 1, Items: [{ label: 'Mug', price: 1, quantity: 1, amount: 1 }] },
      }),
    });
    expect(withoutInn.status).toBe(200);
    const refused = (await withoutInn.json()) as { Success: boolean; Message: string };
    expect(refused).toMatchObject({ Success: false, Message: expect.stringMatching(/Inn/) as unknown });
    expect(answerProblemsB('register', refused)).toEqual([]);
  });
});
