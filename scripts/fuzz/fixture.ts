/**
 * The fuzzer's account (P142): a client with two organizations, READ and WRITE tokens, a cash register and a
 * Market1 integration (for the groups that call external systems: their sandboxes on loopback), the sample
 * marketplace dictionary, a brand, a category mapped to a marketplace category, a model card with two colours
 * × two sizes (then replaced), a webhook with a public-looking URL (never delivered: the fuzzer runs without
 * workers), an INCOME receiving document with three positions and a cargo place (which also queues webhook
 * deliveries, one of them redelivered), two tags renamed and bound to a product and to the model, a keyword
 * group attached to a product and one merged from two others.
 *
 * Everything is created through the API (the operator's part through the account service, as the CLI does),
 * with `send`, through which the fuzzer harvests the ids of the answers (P142) and keeps the requests as the
 * first successful ones of their operations (P141). Any refused step throws.
 */
import type { Runtime } from '../../src/runtime.ts';
import { AccountService } from '../../src/modules/accounts/service.ts';
import { loadDictionary, sampleDictionary } from '../../src/modules/catalog/dictionary.ts';
import { EVENT_TYPES } from '../../src/events/outbox.ts';
import { createAccount } from '../../tests/helpers/factories.ts';
import { replaceBody, type ProductModel } from '../../tests/helpers/catalog.ts';

/** Sends one request with the WRITE token; resolves with the status and the parsed JSON body. */
export type FixtureSend = (
  method: 'GET' | 'POST' | 'PUT',
  url: string,
  payload?: unknown,
) => Promise<{ statusCode: number; body: unknown }>;

/** The account the fuzzer works as. */
export interface FuzzAccount {
  clientId: number;
  readToken: string;
  writeToken: string;
  /**
   * Ids no answer of the API carries, by pool name: the organizations (made by the operator) and the sample
   * dictionary's marketplace category and parameters.
   */
  seededIds: Record<string, number[]>;
}

/** The marketplace category of the sample dictionary the fixture's category maps to (T-shirts). */
const SAMPLE_MARKET_CATEGORY = 105;

/** A public-looking webhook target; the fuzzer's runtime runs no workers, so nothing is ever sent to it. */
export const FUZZ_WEBHOOK_URL = 'https://hooks.example.com/seller-ops';

/**
 * Creates the account: see the module comment.
 * @param sendAs builds the `send` of a token
 * @throws Error naming the first step the service refused
 */
export async function createFuzzAccount(
  runtime: Runtime,
  sendAs: (token: string) => FixtureSend,
): Promise<FuzzAccount> {
  const account = await createAccount(runtime);
  const secondOrganization = await account.addOrganization();
  const accounts = new AccountService(runtime.database.db, runtime.secrets);
  await accounts.setCashRegister(account.organizationId, {
    service: 'CASH_REGISTER_A',
    login: 'fuzz',
    password: 'fuzz',
    inn: '7700000000',
    email: 'receipts@example.com',
    paymentAddress: 'https://shop.example.com',
    taxationSystem: 'SIMPLIFIED_INCOME',
  });
  await accounts.setIntegration(account.organizationId, { service: 'SERVICE_01', apiKey: 'fuzz-api-key' });
  await runtime.changes.run((trx) => loadDictionary(trx, sampleDictionary()));

  const send = sendAs(account.writeToken);
  const create = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) => {
    const response = await send(method, url, payload);
    if (response.statusCode !== 200)
      throw new Error(
        `fuzz fixture: ${method} ${url} answered ${response.statusCode} ${JSON.stringify(response.body)}`,
      );
    return response.body as Record<string, unknown> & { id: number };
  };
  const organizationId = account.organizationId;
  const webhook = await create('POST', '/api/webhook/', {
    name: 'Fuzz receiver',
    url: FUZZ_WEBHOOK_URL,
    organizationId,
    types: [...EVENT_TYPES],
  });
  const brand = await create('POST', '/api/brand', { name: 'Fuzz brand' });
  const category = await create('POST', '/api/category', {
    name: 'Fuzz T-shirts',
    market1CategoryId: SAMPLE_MARKET_CATEGORY,
  });
  const model = (await create('POST', '/api/model', {
    article: 'FUZZ-TEE',
    title: 'Fuzz T-shirt',
    organizationId,
    brandId: brand.id,
    categoryId: category.id,
    views: ['black', 'white'].map((color, view) => ({
      color,
      sizes: ['S', 'M'].map((size, index) => ({
        name: `Fuzz T-shirt ${color} ${size}`,
        size,
        barcode: `460000000${view}${index}01`,
      })),
    })),
  })) as unknown as ProductModel;
  const productIds = model.views.flatMap((view) => view.sizes.map((size) => size.id));
  await create('PUT', `/api/model/${model.id}`, replaceBody(model, { title: 'Fuzz T-shirt, replaced' }));
  const order = (await create('POST', '/api/inbound/', {
    organizationId,
    type: 'INCOME',
    name: 'Fuzz receiving',
    products: productIds
      .slice(0, 2)
      .map((productId, index) => ({ productId, quantity: 10 + index, price: 99.9 })),
  })) as unknown as { id: number; products: Array<{ id: number; quantity: number }> };
  const position = order.products[0];
  if (position === undefined) throw new Error('fuzz fixture: the receiving document has no positions');
  await create('POST', `/api/inbound/${order.id}/product`, {
    productId: productIds[2],
    quantity: 3,
    price: 10,
  });
  await create('PUT', `/api/inbound/${order.id}/product`, { productId: productIds[2], quantity: 4 });
  await create('POST', `/api/inbound/updateOrderPackage?orderId=${order.id}`, [
    {
      number: 'CP-1',
      width: 60,
      height: 40,
      length: 80,
      weight: 12_000,
      items: [{ orderProductId: position.id, quantity: position.quantity }],
    },
  ]);
  const sale = await create('POST', '/api/tag', { name: 'Fuzz sale' });
  const season = await create('POST', '/api/tag', { name: 'Fuzz season' });
  await create('PUT', '/api/tag', { id: sale.id, name: 'Fuzz sale, renamed' });
  await create('PUT', `/api/tag/${season.id}`, { name: 'Fuzz season, renamed' });
  await create('PUT', `/api/tag/product/${sale.id}/${productIds[0]}`);
  await create('PUT', `/api/tag/model/${season.id}/${model.id}`);
  const group = await create('POST', '/api/keyword/group?groupName=Fuzz%20words', ['cotton', 'basic tee']);
  await create('PUT', `/api/keyword/add?productId=${productIds[0]}`, [group.id]);
  const summer = await create('POST', '/api/keyword/group?groupName=Fuzz%20summer', ['linen']);
  const beach = await create('POST', '/api/keyword/group?groupName=Fuzz%20beach', ['towel']);
  await create('POST', '/api/keyword/group/merge?newGroupName=Fuzz%20holidays', [summer.id, beach.id]);
  const deliveries = (await create('GET', `/api/webhook/${webhook.id}/deliveries`)) as unknown as {
    rows: Array<{ id: number }>;
  };
  const delivery = deliveries.rows[0];
  if (delivery === undefined) throw new Error('fuzz fixture: the webhook has no deliveries');
  await create('POST', `/api/webhook/${webhook.id}/deliveries/${delivery.id}/retry`);
  const sampleCategory = sampleDictionary().categories.find((entry) => entry.id === SAMPLE_MARKET_CATEGORY);
  return {
    clientId: account.clientId,
    readToken: account.readToken,
    writeToken: account.writeToken,
    seededIds: {
      organization: [organizationId, secondOrganization],
      market1category: [SAMPLE_MARKET_CATEGORY],
      market2category: [SAMPLE_MARKET_CATEGORY],
      param: (sampleCategory?.parameters ?? []).map((parameter) => parameter.id),
    },
  };
}
