/**
 * Maps task rows to `TmsTask` (spec §2; D10.3) and builds the download headers of a task's file (P86). Internal
 * columns (attempt, job, heartbeat, failure, file chunks) never leave the service.
 */
import type { Selectable } from 'kysely';
import type { TaskTable } from './tables.ts';
import type { TmsTask } from './schemas.ts';

/** A task row. */
export type TaskRow = Selectable<TaskTable>;

/** The download path of a task's file under `baseUrl` (`PUBLIC_BASE_URL`, empty = relative). */
export const taskFileUrl = (baseUrl: string, id: number) => `${baseUrl}/api/task/${id}/file`;

/** Whether a task's file can be downloaded: the task FINISHED with a file. */
export const hasFile = (row: TaskRow) => row.status === 'FINISHED' && row.file_attempt !== null;

/** A task as the API returns it; `url` only for a FINISHED task with a file. */
export const presentTask = (row: TaskRow, baseUrl: string): TmsTask => ({
  id: row.id,
  status: row.status,
  type: row.type,
  name: row.name,
  clientId: row.client_id,
  entityId: row.entity_id,
  organizationId: row.organization_id,
  progress: row.progress,
  processedQuantity: row.processed_quantity,
  priority: 0,
  retryNumber: row.retry_number,
  userId: row.user_id,
  properties: row.properties === null ? null : JSON.stringify(row.properties),
  message: row.message,
  messageParams: row.message_params === null ? null : JSON.stringify(row.message_params),
  url: hasFile(row) ? taskFileUrl(baseUrl, row.id) : null,
  inputFileUrl: null,
  lang: row.lang,
  createdDate: row.created_date.toISOString(),
  startDate: row.start_date?.toISOString() ?? null,
  finishDate: row.finish_date?.toISOString() ?? null,
  retryDate: row.retry_date?.toISOString() ?? null,
  debug: false,
  forcedStart: false,
  service: row.service,
});

/** RFC 8187 `ext-value` characters beyond alphanumerics that need no percent-encoding. */
const ATTR_CHAR = /[!#$&+\-.^_`|~]/;

/**
 * `Content-Disposition: attachment` naming `fileName` twice (RFC 6266 §4.3): `filename="…"` with an ASCII
 * fallback (other characters become `_`) for old clients, and `filename*=UTF-8''…` with the exact name.
 */
export function attachmentHeader(fileName: string): string {
  const fallback = fileName.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = [...new TextEncoder().encode(fileName)]
    .map((byte) => {
      const char = String.fromCharCode(byte);
      return /[A-Za-z0-9]/.test(char) || ATTR_CHAR.test(char)
        ? char
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
