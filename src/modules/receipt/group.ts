/**
 * Factory of the receipt group (spec §4.3, D8): the cash-register connectors (closed with the runtime), the
 * exchange with the providers, the refresh job and the service, built once; routes under `/api/receipt`.
 */
import type { Runtime } from '../../runtime.ts';
import type { ResourceGroup } from '../group.ts';
import { createCashRegisterConnectors } from '../../connectors/cash-register/connectors.ts';
import { ReceiptExchange } from './exchange.ts';
import { ReceiptRefresh } from './jobs.ts';
import { receiptRoutes } from './routes.ts';
import { ReceiptService } from './service.ts';

/** Builds the receipt group over `runtime`. */
export function createReceiptGroup(runtime: Runtime): ResourceGroup {
  const { config } = runtime;
  const db = runtime.database.db;
  const connectors = createCashRegisterConnectors({ timeoutMs: config.cashRegisterTimeoutMs });
  runtime.onClose(async () => {
    for (const connector of Object.values(connectors)) connector.close();
  });
  const exchange = new ReceiptExchange(db, runtime.changes, runtime.secrets, config, connectors);
  const refresh = new ReceiptRefresh({
    db,
    changes: runtime.changes,
    jobs: runtime.jobs,
    exchange,
    schedule: config.receiptRefreshSchedule,
    timeoutMs: config.cashRegisterTimeoutMs,
  });
  return {
    name: 'receipt',
    scope: 'api',
    prefix: '/receipt',
    routes: receiptRoutes(new ReceiptService(db, runtime.changes, exchange, refresh)),
    jobs: [refresh.job],
  };
}
