/**
 * The cash-register connectors of a process: one HTTP client per provider (each keeps its connection pool and,
 * for provider A, its tokens), chosen by the organization's `service` (D8.1).
 */
import type { CashRegisterConnector, CashRegisterService } from './connector.ts';
import { ProviderAClient } from './provider-a/client.ts';
import { ProviderBClient } from './provider-b/client.ts';

/** The connector of each provider. */
export type CashRegisterConnectors = Record<CashRegisterService, CashRegisterConnector>;

/** Builds both connectors; `timeoutMs` limits each HTTP exchange (`CASH_REGISTER_TIMEOUT_MS`). */
export function createCashRegisterConnectors(options: { timeoutMs: number }): CashRegisterConnectors {
  return {
    CASH_REGISTER_A: new ProviderAClient(options),
    CASH_REGISTER_B: new ProviderBClient(options),
  };
}
