/**
 * The knowledge group's operation (D11.3, P118): checks the caller's access to the organization's Market1 data
 * and creates the dictionary refresh task in one transaction.
 */
import type { ChangeRunner } from '../../changes/change-runner.ts';
import type { Principal } from '../../http/auth.ts';
import type { Market1Access } from '../campaign/market1-access.ts';
import type { TaskDefinition } from '../task/definition.ts';
import type { TaskService } from '../task/service.ts';
import type { TmsTask } from '../task/schemas.ts';
import type { DictionaryRefreshProperties } from './refresh-task.ts';
import type { DictionaryRefreshQuery } from './schemas.ts';

/** Starts dictionary refreshes. */
export class KnowledgeService {
  constructor(
    private readonly changes: ChangeRunner,
    private readonly access: Market1Access,
    private readonly tasks: TaskService,
    private readonly kind: TaskDefinition<DictionaryRefreshProperties>,
  ) {}

  /**
   * Creates a `MARKET1_DICTIONARY_TASK` refreshing `query.subjectIds` (deduplicated, ascending), or every stored
   * category when absent, through the organization's Market1 integration.
   * @throws AppError `error_no_marketplace`, `error_unsupported_service`, `error_no_organization`,
   *   `error_organization_not_found`, `error_subscription_expired`, `error_prepared_integration_not_found`
   *   (checked before the task exists, so the caller gets them as the answer)
   */
  async refresh(principal: Principal, query: DictionaryRefreshQuery): Promise<TmsTask> {
    const organization = await this.access.check(principal, {
      organizationId: query.organizationId,
      service: query.service,
    });
    // Opening the connector checks the integration now rather than in the background.
    await this.access.connector(organization);
    const subjectIds = query.subjectIds ? [...new Set(query.subjectIds)].sort((a, b) => a - b) : null;
    return this.changes.run((trx) =>
      this.tasks.create(trx, principal, this.kind, {
        organizationId: organization.organizationId,
        service: organization.service,
        name: subjectIds
          ? `Market1 dictionaries: ${subjectIds.length} subject(s)`
          : 'Market1 dictionaries: stored categories',
        properties: { subjectIds },
      }),
    );
  }
}
