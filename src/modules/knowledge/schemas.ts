/**
 * Request schema of the dictionary refresh (D11.3, P118): `POST /api/knowledge/refresh` takes the organization
 * whose Market1 connector reads the dictionaries and, optionally, the subjects (marketplace categories,
 * `market2CategoryId`) to refresh.
 */
import { Type, type Static } from 'typebox';
import { Int64, RepeatedQuery } from '../../http/schemas.ts';

/** Most subjects one refresh may name (the marketplace has a few thousand). */
export const MAX_REFRESH_SUBJECTS = 10_000;

/** Query of `POST /api/knowledge/refresh`; `organizationId` and `service` are checked by `Market1Access`. */
export const DictionaryRefreshQuery = Type.Object({
  organizationId: Type.Optional(Int64({ description: 'The organization whose Market1 integration is used' })),
  service: Type.Optional(Type.String({ maxLength: 50, description: 'Must be `SERVICE_01` (Market1)' })),
  subjectIds: RepeatedQuery(Int64(), {
    maxItems: MAX_REFRESH_SUBJECTS,
    description:
      'Subjects (market2CategoryId) to load or refresh, repeated; absent = every category already stored',
  }),
});
export type DictionaryRefreshQuery = Static<typeof DictionaryRefreshQuery>;
