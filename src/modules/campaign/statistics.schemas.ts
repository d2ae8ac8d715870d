/**
 * Request and response schemas of the statistics part of the campaign group (spec §2 StatCampaign, CampaignStat,
 * CampaignTotalStats; §4.6 getStatCampaigns, getTotalStatCampaigns, getCampaigns; D4). Money is roubles as a
 * JSON number with at most 2 decimals; ratios are percents rounded to 2 decimals (P111).
 */
import { CursorQuery, KeysetPage } from '../../http/cursor.ts';
import { Type, type Static } from 'typebox';
import { ServiceSchema, StringEnum } from '../../domain/enums.ts';
import { DateTime as DateTimeSchema, Int64, Nullable, Page } from '../../http/schemas.ts';
import { CampaignFilterQuery } from './filter.ts';
import { CampaignTypeSchema } from './schemas.ts';

const DateTime = DateTimeSchema();
const Count = (description: string) => Type.Integer({ minimum: 0, description });
const Amount = (description: string) => Type.Number({ description });

/** One row of campaign statistics over the requested days (spec §2 StatCampaign, D10.4, P111). */
export const StatCampaign = Type.Object(
  {
    rowType: StringEnum(['CAMPAIGN', 'UNALLOCATED'] as const, {
      description:
        'CAMPAIGN: statistics attributed to products; UNALLOCATED: the same campaign’s statistics not attributed to a product',
    }),
    uniqueId: Type.String({ description: 'Stable key of the row: `<rowType>:<campaignId>`' }),
    campaignId: Int64(),
    externalId: Int64({ description: "The marketplace's campaign id" }),
    campaignName: Type.String(),
    service: ServiceSchema,
    campaignType: CampaignTypeSchema,
    categoryName: Nullable(Type.String()),
    createDate: Nullable(DateTime),
    startDate: Nullable(DateTime),
    endDate: Nullable(DateTime),
    clientId: Int64(),
    organizationId: Int64(),
    organizationName: Type.String(),
    currency: Type.String({ description: 'Currency of the money values: RUB' }),
    views: Count('Views'),
    clicks: Count('Clicks'),
    ratioClicksViews: Amount('CTR: clicks / views × 100, percent'),
    averageCost: Amount('Average cost of a click: expenses / clicks, roubles'),
    expenses: Amount('Expenses, roubles'),
    quantityAddCart: Count('Additions to cart'),
    quantityOrders: Count('Orders'),
    ratioOrdersOfVisits: Amount('Orders / clicks × 100, percent'),
    quantityProductOrders: Count('Ordered items'),
    ordersAmount: Amount('Orders amount, roubles'),
    drr: Amount('Share of advertising costs: expenses / ordersAmount × 100, percent'),
    cps: Amount('Cost of a sale: expenses / quantityOrders, roubles'),
  },
  { title: 'StatCampaign' },
);
export type StatCampaign = Static<typeof StatCampaign>;

/** A page of statistics rows (spec §2 FindResponseStatCampaign, D4.2). */
export const FindResponseStatCampaign = Page(StatCampaign, { title: 'FindResponseStatCampaign' });
export type FindResponseStatCampaign = Static<typeof FindResponseStatCampaign>;

/** One campaign of a top list (spec §2 CampaignStat). */
export const CampaignStat = Type.Object(
  {
    campaign: Type.String({ description: "The campaign's name" }),
    value: Type.Number(),
    organizationId: Int64(),
    organizationName: Type.String(),
  },
  { title: 'CampaignStat' },
);
export type CampaignStat = Static<typeof CampaignStat>;

/** The top `topN` campaigns by each value over the requested days (spec §2 CampaignTotalStats, P113). */
export const CampaignTotalStats = Type.Object(
  {
    clicks: Type.Array(CampaignStat),
    views: Type.Array(CampaignStat),
    expenses: Type.Array(CampaignStat),
    averageCost: Type.Array(CampaignStat),
  },
  { title: 'CampaignTotalStats' },
);
export type CampaignTotalStats = Static<typeof CampaignTotalStats>;

/** `getTotalStatCampaigns` query: the filter set plus the required `topN` (spec §4.6, §8). */
export const TotalStatCampaignsQuery = Type.Object(
  {
    ...CampaignFilterQuery.properties,
    topN: Type.Integer({ minimum: 1, maximum: 500, description: 'Campaigns in each top list, 1..500' }),
  },
  { title: 'TotalStatCampaignsQuery' },
);
export type TotalStatCampaignsQuery = Static<typeof TotalStatCampaignsQuery>;

/** A page of campaigns (`getCampaigns`, P114): the list shape of D4.2 with `nextCursor` (P172). */
export const FindResponseCampaign = KeysetPage(Type.Ref('Campaign'), { title: 'FindResponseCampaign' });

/** Query of `getCampaigns`: the CampaignFilter query set and a `cursor` of keyset pagination (P172). */
export const CampaignListQuery = Type.Object(
  { ...CampaignFilterQuery.properties, ...CursorQuery },
  { title: 'CampaignListQuery' },
);
export type CampaignListQuery = Static<typeof CampaignListQuery>;
