/**
 * Fastify's validator compilers (`schemaController.compilersFactory.buildValidator`), one Ajv per kind of input
 * (decision P219):
 *
 * - query strings, paths and header fields are text, so Ajv converts their values to the schema's types (`"5"` →
 *   5, a repeated parameter given once → an array of one), after P138's check of how integers are written;
 * - a JSON body carries its own types, so its Ajv converts nothing: `null`, `true` or `"5"` where a number
 *   belongs, a scalar where an array belongs, or no body at all is 400 `error_validation` naming the field,
 *   never read as 0, 1, 5, `[x]` or `[0]`.
 *
 * Both take the other Ajv options of the app (`ajv.customOptions`, `ajv.plugins`) and its shared schemas, from
 * `@fastify/ajv-compiler`, the compiler Fastify uses by default.
 */
import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifyServerOptions } from 'fastify';

type SchemaController = NonNullable<FastifyServerOptions['schemaController']>;
type ValidatorFactory = NonNullable<NonNullable<SchemaController['compilersFactory']>['buildValidator']>;

/** The `buildValidator` of Fastify's schema controller: bodies exactly as sent, other parts converted. */
export function validatorFactory(): ValidatorFactory {
  const fromPool = AjvCompiler();
  return (externalSchemas, options) => {
    const ajvOptions = options ?? { customOptions: {} };
    const converting = fromPool(externalSchemas, ajvOptions);
    // The app's Ajv runs in its default (JSON Schema) mode, never JTD, whose options have no `coerceTypes`.
    const exact = fromPool(externalSchemas, {
      ...ajvOptions,
      customOptions: { ...ajvOptions.customOptions, coerceTypes: false },
    } as typeof ajvOptions);
    return (route) => (route.httpPart === 'body' ? exact : converting)(route);
  };
}
