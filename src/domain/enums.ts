/** Enumerations shared by several groups (spec §2 "Service enumeration"). */
import { Type } from 'typebox';

/** The 40 service values: `NONE` (empty), `NATIONAL_CATALOG`, `OTHER`, `EMAIL`, `SERVICE_01`..`SERVICE_36`. */
export const SERVICES = [
  'NONE',
  'NATIONAL_CATALOG',
  'OTHER',
  'EMAIL',
  ...Array.from({ length: 36 }, (_, index) => `SERVICE_${String(index + 1).padStart(2, '0')}`),
] as const;
export type Service = (typeof SERVICES)[number];

/** Builds a string-enum schema (`{type: string, enum: [...]}`) with a static union type. */
export function StringEnum<T extends string>(values: readonly T[], options: object = {}) {
  return Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });
}

/** Schema of a service value. */
export const ServiceSchema = StringEnum(SERVICES as readonly string[], {
  description: 'Service enumeration',
});
