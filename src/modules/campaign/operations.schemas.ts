/**
 * Request and answer schemas of the campaign operations (spec §4.6, §2 Market1Type, D10.2). `organizationId` and
 * `service` are optional in the schemas although the spec requires them: their absence answers the spec's own
 * codes (`error_no_organization`, `error_no_marketplace`) from `Market1Access.check`, not a generic validation
 * error.
 */
import { Type, type Static } from 'typebox';
import { ServiceSchema } from '../../domain/enums.ts';
import { DateTime, Int32, Int64 } from '../../http/schemas.ts';
import { CampaignStatusSchema, CampaignTypeSchema, WriteOffTypeSchema } from './schemas.ts';

/** A calendar day `YYYY-MM-DD` (checked to be a real day by the service). */
const Day = (description: string) => Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description });

const organizationId = Type.Optional(Int64({ description: 'An organization of the token’s client' }));
const service = Type.Optional(ServiceSchema);

/** Query of `GET /api/campaign/updateCampaigns`. */
export const UpdateCampaignsQuery = Type.Object({ organizationId, service });
export type UpdateCampaignsQuery = Static<typeof UpdateCampaignsQuery>;

/** Query of `GET /api/campaign/reloadCampaignStats`. */
export const ReloadCampaignStatsQuery = Type.Object({
  dateFrom: Day('First day to reload, the marketplace’s calendar day'),
  dateTo: Day('Last day to reload, inclusive; at most 366 days after dateFrom'),
  organizationId,
  isExpensesOnly: Type.Optional(
    Type.Boolean({ description: 'Replace only the expenses of stored rows (default false: every counter)' }),
  ),
  service,
});
export type ReloadCampaignStatsQuery = Static<typeof ReloadCampaignStatsQuery>;

/** Query of `POST /api/campaign/updateStatusCampaign`. */
export const UpdateStatusCampaignQuery = Type.Object({
  campaignId: Int64({ description: 'Our campaign id (`Campaign.id`)' }),
  status: CampaignStatusSchema,
  organizationId,
});
export type UpdateStatusCampaignQuery = Static<typeof UpdateStatusCampaignQuery>;

/** Query of `POST /api/campaign/createCampaign`. */
export const CreateCampaignQuery = Type.Object({ organizationId });
export type CreateCampaignQuery = Static<typeof CreateCampaignQuery>;

/**
 * Body of `POST /api/campaign/createCampaign`: a Campaign (spec §2) of which the create reads `type`, `name` (or
 * `campaignName`), `nms` (or `externalProductId`), and for `AUTO` also `categoryId`. The campaign is created
 * READY without a budget (P177): `sum`, `writeOffType` and `onPause` are accepted and not applied, like the
 * fields the marketplace assigns (`id`, `externalId`, dates, status…).
 */
export const CampaignCreateBody = Type.Object(
  {
    id: Type.Optional(Int64()),
    externalId: Type.Optional(Int64()),
    name: Type.Optional(Type.String({ maxLength: 128 })),
    campaignName: Type.Optional(Type.String({ maxLength: 128 })),
    type: Type.Optional(CampaignTypeSchema),
    statusType: Type.Optional(CampaignStatusSchema),
    productId: Type.Optional(Int64()),
    externalProductId: Type.Optional(Int64({ description: 'One product (nm id) when `nms` is absent' })),
    createDate: Type.Optional(DateTime()),
    startDate: Type.Optional(DateTime()),
    endDate: Type.Optional(DateTime()),
    sum: Type.Optional(
      Type.Integer({
        minimum: 0,
        format: 'int64',
        description: 'Not applied: a new campaign gets its budget in the marketplace cabinet (P177)',
      }),
    ),
    writeOffType: Type.Optional(WriteOffTypeSchema),
    onPause: Type.Optional(
      Type.Boolean({ description: 'Not applied: a new campaign is READY until started (P177)' }),
    ),
    clientId: Type.Optional(Int64()),
    organizationId: Type.Optional(Int64()),
    service,
    categoryId: Type.Optional(Int64({ description: 'AUTO: the subject whose products are promoted' })),
    categoryName: Type.Optional(Type.String()),
    campaignType: Type.Optional(Type.String()),
    dateStatImport: Type.Optional(DateTime()),
    nms: Type.Optional(
      Type.String({
        pattern: '^[0-9]{1,19}(,[0-9]{1,19})*$',
        description: 'Products (nm ids), comma-separated',
      }),
    ),
    paymentType: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type CampaignCreateBody = Static<typeof CampaignCreateBody>;

/** Query of `GET /api/campaign/getMarket1Subjects` (all required by the spec; `limit` up to 1000). */
export const Market1SubjectsQuery = Type.Object({
  query: Type.String({ maxLength: 200, description: 'Part of the subject name; empty = any' }),
  limit: Int32({ minimum: 1, maximum: 1000 }),
  organizationId,
});
export type Market1SubjectsQuery = Static<typeof Market1SubjectsQuery>;

/** Query of `GET /api/campaign/getCampaignBalance` (D10.2). */
export const CampaignBalanceQuery = Type.Object({ service, organizationId });
export type CampaignBalanceQuery = Static<typeof CampaignBalanceQuery>;

const Percent = (description: string) => Type.Optional(Type.Number({ description: `${description}, %` }));

/** A marketplace subject (category) with its commissions (spec §2 `Market1Type`; all fields optional). */
export const Market1Type = Type.Object(
  {
    id: Type.Optional(Int64({ description: 'The subject id (same as market1Id; subjects are not stored)' })),
    market1Id: Type.Optional(Int64({ description: 'The marketplace’s subject id' })),
    parentId: Type.Optional(Int64({ description: 'The parent category' })),
    name: Type.Optional(Type.String()),
    hasParent: Type.Optional(Type.Boolean()),
    commission: Percent('Commission of a sale through the marketplace’s warehouse (= fbwCommission)'),
    fbwCommission: Percent('Sale through the marketplace’s warehouse'),
    fbsCommission: Percent('From the seller’s warehouse, delivered by the marketplace'),
    dbsCommission: Percent('Delivered by the seller'),
    edbsCommission: Percent('Express delivery by the seller'),
    cAndCCommission: Percent('Pick-up at the seller’s point'),
    candCCommission: Percent('Same as cAndCCommission'),
    bookingCommission: Percent('Booking'),
  },
  { $id: 'Market1Type', title: 'Market1Type' },
);
export type Market1Type = Static<typeof Market1Type>;

/** The advertising account's money (D10.2), whole roubles. */
export const CampaignBalance = Type.Object(
  {
    balance: Type.Integer({ description: 'The account (`BALANCE` write-off), whole roubles' }),
    net: Type.Integer({ description: 'The balance (`NET` write-off), whole roubles' }),
    bonus: Type.Integer({ description: 'Bonuses (`BONUS` write-off), whole roubles' }),
  },
  { $id: 'CampaignBalance', title: 'CampaignBalance' },
);
export type CampaignBalance = Static<typeof CampaignBalance>;
