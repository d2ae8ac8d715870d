/**
 * The exchanges with an organization's fiscal-data operator and how their answers change a receipt (D8.2, D8.3,
 * P74–P76). Used by the create and update operations and by the refresh job, so every path maps answers the same
 * way: an unsettled receipt is registered again with its own id as external id while CREATED (the provider
 * answers with the first registration) or asked about while PENDING, and an answer only ever moves a receipt
 * forward (CREATED → PENDING → COMPLETED | FAILED | CANCELLED); a settled receipt never changes again.
 */
import type { Kysely, Transaction, Updateable } from 'kysely';
import type { Config } from '../../config.ts';
import type { DB } from '../../db/schema.ts';
import type { ChangeRunner } from '../../changes/change-runner.ts';
import type { SecretBox } from '../../security/secret-box.ts';
import { findCashRegister } from '../accounts/credentials.ts';
import { organizationRepository } from '../accounts/repository.ts';
import { AppError } from '../../http/errors.ts';
import {
  missingCompanyDetail,
  unavailable,
  type CashRegisterService,
  type CompanyDetails,
  type ProviderAccount,
  type ProviderOutcome,
} from '../../connectors/cash-register/connector.ts';
import type { CashRegisterConnectors } from '../../connectors/cash-register/connectors.ts';
import { kopecksOfDecimal } from './lines.ts';
import type { ReceiptRow } from './presenter.ts';
import { receiptRepository } from './repository.ts';
import type { ReceiptStatus, ReceiptTable } from './tables.ts';

const SETTLED: ReadonlySet<ReceiptStatus> = new Set(['COMPLETED', 'FAILED', 'CANCELLED']);

/** COMPLETED, FAILED and CANCELLED are final: no answer changes them (P74). */
export const isSettled = (status: ReceiptStatus): boolean => SETTLED.has(status);

/**
 * The changes `outcome` makes to `row`, or undefined when it changes nothing (P74, P75). `basis` is the status
 * the exchange started from: a failed exchange that another one overtook (the status moved on) records nothing.
 */
export function outcomeChanges(
  row: ReceiptRow,
  outcome: ProviderOutcome,
  basis: ReceiptStatus = row.status,
): Updateable<ReceiptTable> | undefined {
  if (isSettled(row.status)) return undefined;
  switch (outcome.kind) {
    case 'unavailable':
      // The receipt stays as it is; the message says why the last exchange failed (it is retried).
      return row.status !== basis || row.error_message === outcome.message
        ? undefined
        : { error_message: outcome.message };
    case 'pending':
      return row.status === 'PENDING' &&
        row.external_receipt_id === outcome.providerReceiptId &&
        row.provider_status === outcome.providerStatus &&
        row.error_message === null
        ? undefined
        : {
            status: 'PENDING',
            external_receipt_id: outcome.providerReceiptId,
            provider_status: outcome.providerStatus,
            error_message: null,
          };
    case 'completed':
      return {
        status: 'COMPLETED',
        external_receipt_id: outcome.providerReceiptId,
        provider_status: outcome.providerStatus,
        fiscal_number: outcome.fiscal.fiscalNumber,
        fiscal_document_attribute: outcome.fiscal.fiscalDocumentAttribute,
        fiscal_storage_number: outcome.fiscal.fiscalStorageNumber,
        fns_url: outcome.fiscal.fnsUrl,
        // The provider's registration time (provider A: to the second), never before our creation time.
        completed_date:
          outcome.fiscal.completedAt < row.created_date ? row.created_date : outcome.fiscal.completedAt,
        error_message: null,
      };
    case 'failed':
      return {
        status: 'FAILED',
        external_receipt_id: outcome.providerReceiptId ?? row.external_receipt_id,
        provider_status: outcome.providerStatus,
        error_message: outcome.message,
      };
    case 'cancelled':
      return {
        status: 'CANCELLED',
        external_receipt_id: outcome.providerReceiptId,
        provider_status: outcome.providerStatus,
        error_message: outcome.message,
      };
  }
}

/** An organization's provider and its account there. */
export interface ProviderSettings {
  service: CashRegisterService;
  account: ProviderAccount;
  /**
   * A company detail the provider requires that the settings lack (saved before it was required): no receipt can
   * be sent until the operator completes them.
   */
  missing: keyof CompanyDetails | undefined;
}

/**
 * 400 `error_cash_register_not_configured` for an organization without usable settings; `missing` names the
 * company detail they lack.
 */
export function notConfigured(organizationId: number, missing?: string): AppError {
  return new AppError('error_cash_register_not_configured', {
    organizationId,
    ...(missing !== undefined && { missing }),
  });
}

/** Talks to the providers about receipts and records what they answer. */
export class ReceiptExchange {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly changes: ChangeRunner,
    /** Opens the sealed provider password (P160). */
    private readonly secrets: SecretBox,
    private readonly config: Pick<Config, 'cashRegisterAUrl' | 'cashRegisterBUrl'>,
    private readonly connectors: CashRegisterConnectors,
  ) {}

  /**
   * The provider settings of an organization of `clientId` (D8.1): its cash-register settings with the password
   * opened, the base URL (its own, else `CASH_REGISTER_A_URL`/`_B_URL` or the embedded sandbox), the group code
   * (P72) and the company details of its receipts (the organization's INN when the settings have none).
   * @returns undefined when the organization has no settings or no provider URL is known (not configured)
   * @throws SecretOpenError when the stored password cannot be opened (operator key changed)
   */
  async settings(
    db: Kysely<DB>,
    clientId: number,
    organizationId: number,
  ): Promise<ProviderSettings | undefined> {
    const settings = await findCashRegister(db, this.secrets, clientId, organizationId);
    if (!settings) return undefined;
    const baseUrl =
      settings.baseUrl ??
      (settings.service === 'CASH_REGISTER_A' ? this.config.cashRegisterAUrl : this.config.cashRegisterBUrl);
    if (!baseUrl) return undefined;
    const organization = await organizationRepository.findOfClient(db, clientId, organizationId);
    const company = { ...settings.company, inn: settings.company.inn ?? organization?.inn ?? null };
    return {
      service: settings.service,
      account: {
        baseUrl: baseUrl.replace(/\/+$/, ''),
        login: settings.login,
        password: settings.password,
        groupCode: settings.groupCode ?? settings.login,
        company,
      },
      missing: missingCompanyDetail(settings.service, company),
    };
  }

  /** One exchange about an unsettled receipt: registration while CREATED (same external id), status while PENDING. */
  exchange(row: ReceiptRow, account: ProviderAccount): Promise<ProviderOutcome> {
    const connector = this.connectors[row.cash_register_service];
    const externalId = String(row.id);
    if (row.status === 'PENDING' && row.external_receipt_id !== null)
      return connector.status(account, { externalId, providerReceiptId: row.external_receipt_id });
    return connector.register(account, {
      externalId,
      type: row.receipt_type,
      lines: row.lines,
      total: Number(kopecksOfDecimal(row.total_amount)),
      createdAt: row.created_date,
    });
  }

  /**
   * An exchange about `row` with its organization's current settings; `unavailable` when they are gone or now
   * name another provider (the receipt belongs to the one it was created with).
   */
  async refresh(row: ReceiptRow): Promise<ProviderOutcome> {
    const settings = await this.settings(this.db, row.client_id, row.organization_id);
    if (!settings || settings.service !== row.cash_register_service)
      return unavailable(`the organization has no ${row.cash_register_service} settings any more`);
    if (settings.missing !== undefined)
      return unavailable(`the organization's cash-register settings lack ${settings.missing}`);
    return this.exchange(row, settings.account);
  }

  /**
   * Applies `outcome` of an exchange about `basis` (the receipt as the exchange saw it) and `extra` to the locked
   * receipt `locked` inside `trx`; returns the receipt as stored.
   */
  async apply(
    trx: Transaction<DB>,
    locked: ReceiptRow,
    basis: ReceiptRow,
    outcome: ProviderOutcome,
    extra: Updateable<ReceiptTable> = {},
  ): Promise<ReceiptRow> {
    const changes = { ...outcomeChanges(locked, outcome, basis.status), ...extra };
    return Object.keys(changes).length === 0
      ? locked
      : receiptRepository.update(trx, locked.client_id, locked.id, changes);
  }

  /** Records `outcome` of an exchange about `basis` in its own transaction; returns the receipt as stored. */
  record(basis: ReceiptRow, outcome: ProviderOutcome): Promise<ReceiptRow> {
    return this.changes.run(async (trx) => {
      const locked = await receiptRepository.lock(trx, basis.client_id, basis.id);
      if (!locked) throw new Error(`receipt ${basis.id} disappeared`);
      return this.apply(trx, locked, basis, outcome);
    });
  }
}
