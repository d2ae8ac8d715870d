/**
 * ISO 8601 dates and date-times as the filters take them (spec §4.1, P22, P110): `YYYY-MM-DD`, or a day with hours
 * and minutes, optional seconds and fraction, and an optional offset (`Z`, `+03:00`, `+0300`). Only real calendar
 * days from 0001-01-01 on pass (not 2026-02-30): PostgreSQL's calendar has no year 0000.
 */

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/i;
const FIRST_INSTANT_MS = Date.parse('0001-01-01T00:00:00Z');

/** Whether `YYYY-MM-DD` names a real calendar day from 0001-01-01 on. */
export function isCalendarDay(day: string): boolean {
  const date = new Date(`${day}T00:00:00Z`);
  return date.getTime() >= FIRST_INSTANT_MS && date.toISOString().startsWith(day);
}

/** Minutes east of UTC of an ISO 8601 offset (`Z`, `+03:00`, `-0530`). */
function offsetMinutes(offset: string): number {
  if (offset.toUpperCase() === 'Z') return 0;
  const digits = offset.slice(1).replace(':', '');
  const minutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2));
  return offset.startsWith('-') ? -minutes : minutes;
}

/** A parsed filter value: its instant, and whether it was a date only (then the instant is that day's midnight). */
export interface IsoInstant {
  instant: Date;
  dateOnly: boolean;
}

/**
 * Parses a date or date-time of a real calendar day.
 * @param zoneMinutes minutes east of UTC a value without an offset is read in: a date is its midnight there
 * @param offsetRequired refuse a date-time without an offset instead of reading it in `zoneMinutes`
 * @returns undefined for anything else
 */
export function parseIsoInstant(
  value: string,
  zoneMinutes: number,
  offsetRequired = false,
): IsoInstant | undefined {
  let parsed: IsoInstant | undefined;
  if (DATE_ONLY.test(value)) {
    if (isCalendarDay(value))
      parsed = { instant: new Date(Date.parse(`${value}T00:00:00Z`) - zoneMinutes * 60_000), dateOnly: true };
  } else {
    const parts = DATE_TIME.exec(value);
    if (parts) {
      const [, day = '', hours = '', minutes = '', seconds = '00', fraction = '', offset] = parts;
      const wallClock = Date.parse(
        `${day}T${hours}:${minutes}:${seconds}.${fraction.padEnd(3, '0').slice(0, 3)}Z`,
      );
      const east = offset === undefined ? (offsetRequired ? undefined : zoneMinutes) : offsetMinutes(offset);
      if (!Number.isNaN(wallClock) && isCalendarDay(day) && Number(hours) < 24 && east !== undefined)
        parsed = { instant: new Date(wallClock - east * 60_000), dateOnly: false };
    }
  }
  return parsed;
}
