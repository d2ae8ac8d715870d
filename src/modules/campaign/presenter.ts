/** Turns stored campaign rows into the API's `Campaign` (spec §2); times as ISO 8601 UTC. */
import type { Selectable } from 'kysely';
import type { Campaign } from './schemas.ts';
import type { CampaignTable } from './tables.ts';

const iso = (value: Date | null) => (value ? value.toISOString() : null);

/** The API shape of one campaign row; `productId` is our product of the first nm id when known. */
export function presentCampaign(row: Selectable<CampaignTable>, productId: number | null = null): Campaign {
  return {
    id: row.id,
    externalId: row.external_id,
    name: row.name,
    campaignName: row.name,
    type: row.type,
    statusType: row.status,
    productId,
    externalProductId: row.external_product_ids[0] ?? null,
    createDate: iso(row.create_date),
    startDate: iso(row.start_date),
    endDate: iso(row.end_date),
    sum: row.daily_budget,
    writeOffType: row.write_off_type,
    onPause: row.on_pause,
    clientId: row.client_id,
    organizationId: row.organization_id,
    service: row.service,
    categoryId: row.category_id,
    categoryName: row.category_name,
    campaignType: row.type_code === null ? row.type : String(row.type_code),
    dateStatImport: iso(row.date_stat_import),
    nms: row.external_product_ids.join(','),
    paymentType: row.payment_type,
  };
}
