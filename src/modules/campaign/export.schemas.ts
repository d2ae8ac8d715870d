/**
 * Request schema of the statistics export (spec §2 `CampaignStatExportRequest`, §4.6): `service`,
 * `organizationId`, `organizationIds` and `filter` (the `CampaignFilter` body object, registered once by the
 * group's plugin), all optional; what is missing is answered by the access checks (spec §7).
 */
import { Type } from 'typebox';
import { ServiceSchema } from '../../domain/enums.ts';
import { Int64 } from '../../http/schemas.ts';
import type { CampaignFilter } from './filter.ts';

/** Body of `POST /api/campaign/stats/xlsx`. */
export const CampaignStatExportRequest = Type.Object(
  {
    service: Type.Optional(ServiceSchema),
    organizationId: Type.Optional(Int64({ description: 'The organization whose statistics are exported' })),
    organizationIds: Type.Optional(
      Type.Array(Int64(), { maxItems: 100, description: 'More organizations of the client to include' }),
    ),
    filter: Type.Optional(Type.Ref('CampaignFilter')),
  },
  { title: 'CampaignStatExportRequest' },
);

/** The parsed body (`filter` as the `CampaignFilter` it references). */
export interface CampaignStatExportRequest {
  service?: string;
  organizationId?: number;
  organizationIds?: number[];
  filter?: CampaignFilter;
}
