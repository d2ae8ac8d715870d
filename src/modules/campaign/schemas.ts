/**
 * Schemas shared by the campaign group's operations (spec §2 Campaign, §4.6, D10). Each part of the group
 * (operations, statistics, export) keeps its own request schemas next to its routes; the `Campaign` entity is
 * registered once by the group's plugin (`group.ts`) and referenced as `Type.Ref('Campaign')`.
 */
import { Type, type Static } from 'typebox';
import { StringEnum, ServiceSchema } from '../../domain/enums.ts';
import { DateTime as DateTimeSchema, Int64, Nullable } from '../../http/schemas.ts';
import { CAMPAIGN_STATUSES, CAMPAIGN_TYPES } from '../../connectors/market1/connector.ts';

const DateTime = DateTimeSchema();

/** Campaign type of spec §2 (`Campaign.type`, `StatCampaign.campaignType`). */
export const CampaignTypeSchema = StringEnum(CAMPAIGN_TYPES, { description: 'Campaign type' });
/** Campaign status of spec §3 (`statusType`, `campaignStatus`). */
export const CampaignStatusSchema = StringEnum(CAMPAIGN_STATUSES, { description: 'Campaign status' });
/** Where a campaign's budget is written off from (spec §2 `writeOffType`). */
export const WriteOffTypeSchema = StringEnum(['BALANCE', 'NET', 'BONUS'] as const, {
  description: 'Budget source: the account (BALANCE), the balance (NET) or bonuses (BONUS)',
});

/** A stored campaign as every operation answers it (spec §2 Campaign). */
export const Campaign = Type.Object(
  {
    id: Int64({ description: 'Our id of the campaign' }),
    externalId: Int64({ description: "The marketplace's campaign id" }),
    name: Type.String(),
    campaignName: Type.String({ description: 'Same as name' }),
    type: CampaignTypeSchema,
    statusType: CampaignStatusSchema,
    productId: Nullable(
      Int64({ description: 'Our product of the first promoted item, when the catalog has it' }),
    ),
    externalProductId: Nullable(Int64({ description: 'The first promoted product (marketplace nm id)' })),
    createDate: Nullable(DateTime),
    startDate: Nullable(DateTime),
    endDate: Nullable(DateTime),
    sum: Type.Integer({ format: 'int64', description: 'Daily budget, whole roubles; 0 = none' }),
    writeOffType: Nullable(WriteOffTypeSchema),
    onPause: Type.Boolean(),
    clientId: Int64(),
    organizationId: Int64(),
    service: ServiceSchema,
    categoryId: Nullable(Int64({ description: "The promoted subject (the marketplace's category)" })),
    categoryName: Nullable(Type.String()),
    campaignType: Type.String({ description: 'The marketplace type code as text' }),
    dateStatImport: Nullable(DateTime),
    nms: Type.String({ description: 'Promoted products (nm ids), comma-separated, ascending' }),
    paymentType: Nullable(
      Type.String({ description: '`CPM` (per thousand views), `CPC` (per click) or `UNKNOWN`' }),
    ),
  },
  { $id: 'Campaign', title: 'Campaign' },
);
export type Campaign = Static<typeof Campaign>;
