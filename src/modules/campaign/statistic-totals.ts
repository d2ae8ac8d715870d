/**
 * Running totals of campaign statistics (migration 0013, P112): per campaign and day, the sums of its daily rows
 * from its first day up to that day, apart for statistics attributed to products (`allocated_*`) and the rest
 * (`unallocated_*`, product 0). The statistics pages read any day range as the difference of two rows.
 *
 * With them, per campaign, the days that have statistics (migration 0015, P151): `days` and `unallocated_days`
 * (product 0) as multiranges, so whether a campaign has statistics in a range is one overlap test.
 *
 * Whoever writes `campaign_statistic_day` rows calls `refreshCampaignTotals` in the same transaction, after
 * writing, with the campaigns and the first day it touched; nothing else writes these tables.
 */
import { sql, type Kysely } from 'kysely';
import { idRows } from '../../db/id-rows.ts';
import type { DB } from '../../db/schema.ts';
import type { Day } from './tables.ts';

/** The running sums of one side (allocated or unallocated); money numeric roubles as exact strings. */
type RunningSums<Prefix extends string> = {
  [
    K in
      | 'rows'
      | 'views'
      | 'clicks'
      | 'quantity_add_cart'
      | 'quantity_orders'
      | 'quantity_product_orders' as `${Prefix}_${K}`
  ]: number;
} & { [K in 'expenses' | 'orders_amount' as `${Prefix}_${K}`]: string };

/** One campaign and day of running totals (sums from the campaign's first day up to `date`, inclusive). */
export type CampaignStatisticTotalTable = {
  campaign_id: number;
  date: Day;
  client_id: number;
} & RunningSums<'allocated'> &
  RunningSums<'unallocated'>;

/**
 * The days with statistics of one campaign, as PostgreSQL `datemultirange` text (e.g. `{[2026-04-01,2026-04-03)}`,
 * upper bounds exclusive): `days` any daily row, `unallocated_days` a row of product 0.
 */
export interface CampaignStatisticDaysTable {
  campaign_id: number;
  client_id: number;
  days: string;
  unallocated_days: string;
}

declare module '../../db/schema.ts' {
  interface DB {
    campaign_statistic_total: CampaignStatisticTotalTable;
    campaign_statistic_days: CampaignStatisticDaysTable;
  }
}

/** The summed metrics of `campaign_statistic_day`, in the order of the table's columns. */
export const STATISTIC_METRICS = [
  'views',
  'clicks',
  'expenses',
  'quantity_add_cart',
  'quantity_orders',
  'quantity_product_orders',
  'orders_amount',
] as const;

const sides = [
  ['allocated', sql`external_product_id <> 0`],
  ['unallocated', sql`external_product_id = 0`],
] as const;

/**
 * Rebuilds the running totals of `campaignIds` from `fromDay` (a `YYYY-MM-DD` marketplace day; absent = every
 * day) after their daily rows were written or deleted: rows on and after `fromDay` are deleted and recomputed
 * from the daily rows, starting from the last total before `fromDay`; the campaigns' days with statistics keep
 * those before `fromDay` and take the rest from the daily rows (P151). Call it inside the transaction that wrote
 * the daily rows, so readers never see daily rows and totals disagree. It locks the campaigns' rows (`FOR
 * UPDATE`, in id order) until that transaction ends, so concurrent refreshes of a campaign run one after the
 * other. Cost: the campaigns' daily rows from `fromDay` on (a delete per campaign, then one insert).
 * Each campaign's rows are reached by its key, a lateral probe per id (`idRows`), under any statistics (P197);
 * each probe names the client as a value too, so Citus routes every statement to the client's shard.
 * @param db a transaction (or the database) of the caller
 */
export async function refreshCampaignTotals(
  db: Kysely<DB>,
  clientId: number,
  campaignIds: readonly number[],
  fromDay?: string,
): Promise<void> {
  if (campaignIds.length === 0) return;
  const ids = [...new Set(campaignIds)];
  const from = fromDay ?? '-infinity';
  // Two writers refreshing the same campaign would insert the same days: lock the campaigns, in id order (no
  // deadlock between writers); each statement after the lock sees what the other committed.
  await db
    .selectFrom('campaign')
    .select('id')
    .where('client_id', '=', clientId)
    .where('id', 'in', ids)
    .orderBy('id')
    .forUpdate()
    .execute();
  // One statement per campaign: both key columns by equality, where `campaign_id in (…)` let a generic plan
  // take the client's rows from `fromDay` on by the primary key and filter the campaigns (P197).
  for (const id of ids)
    await db
      .deleteFrom('campaign_statistic_total')
      .where('client_id', '=', clientId)
      .where('campaign_id', '=', id)
      .where(sql<boolean>`date >= ${from}::date`)
      .execute();
  const daily = sides.flatMap(([side, condition]) => [
    sql`count(*) filter (where ${condition}) as ${sql.ref(`${side}_rows`)}`,
    ...STATISTIC_METRICS.map(
      (metric) =>
        sql`coalesce(sum(${sql.ref(metric)}) filter (where ${condition}), 0) as ${sql.ref(`${side}_${metric}`)}`,
    ),
  ]);
  const columns = sides.flatMap(([side]) =>
    ['rows', ...STATISTIC_METRICS].map((metric) => `${side}_${metric}`),
  );
  const running = columns.map(
    (column) =>
      sql`coalesce(base.${sql.ref(column)}, 0) + sum(day.${sql.ref(column)}) over (partition by day.client_id, day.campaign_id order by day.date)`,
  );
  await sql`
    insert into campaign_statistic_total (campaign_id, date, client_id, ${sql.join(columns.map((column) => sql.ref(column)))})
    select day.campaign_id, day.date, day.client_id, ${sql.join(running)}
    from ${idRows(ids, 'target')}
    cross join lateral (
      select campaign_id, date, client_id, ${sql.join(daily)}
      from campaign_statistic_day
      where client_id = ${clientId} and campaign_id = target.id and date >= ${from}::date
      group by client_id, campaign_id, date
      offset 0
    ) as day
    left join lateral (
      select * from campaign_statistic_total as total
      where total.client_id = ${clientId} and total.client_id = day.client_id and total.campaign_id = day.campaign_id
        and total.date < ${from}::date
      order by total.date desc
      limit 1
    ) as base on true
  `.execute(db);
  await refreshStatisticDays(db, clientId, ids, from);
}

/** The days of `campaignIds` with statistics: those before `from` as they were, the rest from the daily rows. */
async function refreshStatisticDays(
  db: Kysely<DB>,
  clientId: number,
  ids: number[],
  from: string,
): Promise<void> {
  const day = sql`daterange(day.date, day.date, '[]')`;
  await sql`
    insert into campaign_statistic_days (campaign_id, client_id, days, unallocated_days)
    select campaign.id, campaign.client_id,
      coalesce(kept.days, '{}') + coalesce(recent.days, '{}'),
      coalesce(kept.unallocated_days, '{}') + coalesce(recent.unallocated_days, '{}')
    from ${idRows(ids, 'target')}
    cross join lateral (
      select id, client_id from campaign where client_id = ${clientId} and id = target.id offset 0
    ) as campaign
    left join lateral (
      select stored.days - datemultirange(daterange(${from}::date, null)) as days,
        stored.unallocated_days - datemultirange(daterange(${from}::date, null)) as unallocated_days
      from campaign_statistic_days as stored
      where stored.client_id = ${clientId} and stored.client_id = campaign.client_id
        and stored.campaign_id = campaign.id
      offset 0
    ) as kept on true
    left join lateral (
      select range_agg(${day}) as days,
        range_agg(${day}) filter (where day.external_product_id = 0) as unallocated_days
      from campaign_statistic_day as day
      where day.client_id = ${clientId} and day.client_id = campaign.client_id and day.campaign_id = campaign.id
        and day.date >= ${from}::date
    ) as recent on true
    on conflict (client_id, campaign_id) do update
      set days = excluded.days, unallocated_days = excluded.unallocated_days
  `.execute(db);
}
