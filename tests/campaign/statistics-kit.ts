/**
 * Test fixture of the statistics tests: campaigns and their daily statistics written straight into our own
 * database with Kysely (the campaign import is another part), followed by `refreshCampaignTotals` in the same
 * transaction, the way the import keeps the running totals.
 */
import type { Insertable, Kysely } from 'kysely';
import type { DB } from '../../src/db/schema.ts';
import { refreshCampaignTotals } from '../../src/modules/campaign/statistic-totals.ts';
import type { CampaignTable } from '../../src/modules/campaign/tables.ts';

let nextExternalId = 700_000 + Math.floor(Math.random() * 1_000_000) * 100;

/** Inserts a Market1 campaign of `organizationId`; returns its id. */
export async function insertCampaign(
  db: Kysely<DB>,
  owner: { clientId: number; organizationId: number },
  values: Partial<Insertable<CampaignTable>> = {},
): Promise<number> {
  nextExternalId += 1;
  const row = await db
    .insertInto('campaign')
    .values({
      client_id: owner.clientId,
      organization_id: owner.organizationId,
      service: 'SERVICE_01',
      external_id: nextExternalId,
      name: `Campaign ${nextExternalId}`,
      type: 'AUTO',
      type_code: 8,
      status: 'ACTIVE',
      create_date: '2026-01-01T09:00:00Z',
      start_date: '2026-01-02T09:00:00Z',
      ...values,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** One daily statistics row; product 0 = not attributed (the default). */
export interface DayValues {
  date: string;
  product?: number;
  views?: number;
  clicks?: number;
  expenses?: string;
  addCart?: number;
  orders?: number;
  productOrders?: number;
  ordersAmount?: string;
}

/** Writes daily rows of a campaign and refreshes its running totals from the first written day, in one transaction. */
export async function insertDays(
  db: Kysely<DB>,
  owner: { clientId: number; organizationId: number },
  campaignId: number,
  days: DayValues[],
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('campaign_statistic_day')
      .values(
        days.map((day) => ({
          campaign_id: campaignId,
          client_id: owner.clientId,
          organization_id: owner.organizationId,
          date: day.date,
          external_product_id: day.product ?? 0,
          views: day.views ?? 0,
          clicks: day.clicks ?? 0,
          expenses: day.expenses ?? '0',
          quantity_add_cart: day.addCart ?? 0,
          quantity_orders: day.orders ?? 0,
          quantity_product_orders: day.productOrders ?? 0,
          orders_amount: day.ordersAmount ?? '0',
        })),
      )
      .onConflict((conflict) =>
        conflict.columns(['client_id', 'campaign_id', 'date', 'external_product_id']).doUpdateSet((eb) => ({
          views: eb.ref('excluded.views'),
          clicks: eb.ref('excluded.clicks'),
          expenses: eb.ref('excluded.expenses'),
          quantity_add_cart: eb.ref('excluded.quantity_add_cart'),
          quantity_orders: eb.ref('excluded.quantity_orders'),
          quantity_product_orders: eb.ref('excluded.quantity_product_orders'),
          orders_amount: eb.ref('excluded.orders_amount'),
        })),
      )
      .execute();
    const first = days.map((day) => day.date).sort()[0];
    await refreshCampaignTotals(trx, owner.clientId, [campaignId], first);
  });
}
