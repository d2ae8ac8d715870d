/** Request and response schemas of the operator (admin) API, decision D1.4. */
import { Type, type Static } from 'typebox';
import { StringEnum } from '../../domain/enums.ts';
import { VISIBLE_TEXT } from '../../domain/text.ts';
import { Int64String, Nullable } from '../../http/schemas.ts';
import { TAXATION_SYSTEMS } from '../../connectors/cash-register/connector.ts';

const Lang = Nullable(StringEnum(['ru', 'en'] as const));
const Role = Type.Union([
  Type.Literal('OWNER'),
  Type.Literal('ADMIN'),
  Type.Literal('MANAGER'),
  Type.Literal('SUPPORT'),
]);
const Access = Type.Union([Type.Literal('READ'), Type.Literal('WRITE')]);
const Id = Type.Integer({ format: 'int64' });

export const ClientCreateBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200, pattern: VISIBLE_TEXT }),
  subscriptionExpiresAt: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
});
export type ClientCreateBody = Static<typeof ClientCreateBody>;

export const ClientPatchBody = Type.Partial(ClientCreateBody);
export type ClientPatchBody = Static<typeof ClientPatchBody>;

export const Client = Type.Object({
  id: Id,
  name: Type.String(),
  subscriptionExpiresAt: Nullable(Type.String({ format: 'date-time' })),
});
export type Client = Static<typeof Client>;

export const OrganizationCreateBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200, pattern: VISIBLE_TEXT }),
  inn: Type.Optional(Nullable(Type.String({ maxLength: 20 }))),
});
export type OrganizationCreateBody = Static<typeof OrganizationCreateBody>;

export const Organization = Type.Object({
  id: Id,
  clientId: Id,
  name: Type.String(),
  inn: Nullable(Type.String()),
});
export type Organization = Static<typeof Organization>;

export const UserCreateBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200, pattern: VISIBLE_TEXT }),
  lang: Type.Optional(Lang),
  role: Type.Optional(Role),
});
export type UserCreateBody = Static<typeof UserCreateBody>;

export const User = Type.Object({ id: Id, clientId: Id, name: Type.String(), lang: Lang, role: Role });
export type User = Static<typeof User>;

export const TokenCreateBody = Type.Object({
  access: Access,
  name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
});
export type TokenCreateBody = Static<typeof TokenCreateBody>;

export const CreatedToken = Type.Object({
  id: Id,
  token: Type.String({ description: 'Shown only in this response' }),
  access: Access,
  name: Nullable(Type.String()),
});
export type CreatedToken = Static<typeof CreatedToken>;

export const IntegrationCreateBody = Type.Object({
  service: Type.String({ pattern: '^(NATIONAL_CATALOG|OTHER|EMAIL|SERVICE_(0[1-9]|[12][0-9]|3[0-6]))$' }),
  apiKey: Type.String({ minLength: 1, maxLength: 4096 }),
  baseUrl: Type.Optional(Nullable(Type.String({ format: 'uri' }))),
});
export type IntegrationCreateBody = Static<typeof IntegrationCreateBody>;

export const Integration = Type.Object({
  id: Id,
  organizationId: Id,
  service: Type.String(),
  baseUrl: Nullable(Type.String()),
});
export type Integration = Static<typeof Integration>;

/**
 * What receipts say about the organization (docs/receipts.md "Configuration"): required as
 * `REQUIRED_COMPANY_DETAILS` says for the provider, checked when the settings are saved.
 */
const CompanyDetailsBody = Type.Object({
  inn: Type.Optional(
    Nullable(
      Type.String({
        pattern: '^([0-9]{10}|[0-9]{12})$',
        description: "the organization's taxpayer number (10 or 12 digits); unset = the organization's inn",
      }),
    ),
  ),
  email: Type.Optional(
    Nullable(
      Type.String({
        format: 'email',
        maxLength: 64,
        description:
          "the sender's email on receipts, also the buyer's contact sent (CASH_REGISTER_A: required)",
      }),
    ),
  ),
  paymentAddress: Type.Optional(
    Nullable(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description: 'the place of settlement, e.g. the shop URL (CASH_REGISTER_A: required)',
      }),
    ),
  ),
  taxationSystem: Type.Optional(Nullable(StringEnum(TAXATION_SYSTEMS))),
});

export const CashRegisterBody = Type.Object({
  service: Type.Union([Type.Literal('CASH_REGISTER_A'), Type.Literal('CASH_REGISTER_B')]),
  login: Type.String({ minLength: 1, maxLength: 200 }),
  password: Type.String({ minLength: 1, maxLength: 4096 }),
  baseUrl: Type.Optional(Nullable(Type.String({ format: 'uri' }))),
  groupCode: Type.Optional(
    Nullable(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'CASH_REGISTER_A: the group of cash registers receipts go to; unset = the login (P72)',
      }),
    ),
  ),
  ...CompanyDetailsBody.properties,
});
export type CashRegisterBody = Static<typeof CashRegisterBody>;

export const CashRegister = Type.Object({
  organizationId: Id,
  service: Type.String(),
  login: Type.String(),
  baseUrl: Nullable(Type.String()),
  groupCode: Nullable(Type.String()),
  inn: Nullable(Type.String()),
  email: Nullable(Type.String()),
  paymentAddress: Nullable(Type.String()),
  taxationSystem: Nullable(Type.String()),
});
export type CashRegister = Static<typeof CashRegister>;

/** Path params `{<name>: int64 id}`, typed by the parameter's name so routes read it without casts. */
export const IdParams = <N extends string>(name: N) =>
  Type.Object({ [name]: Int64String } as Record<N, typeof Int64String>);
