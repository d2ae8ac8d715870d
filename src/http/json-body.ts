/**
 * JSON request body parser: prototype-poisoning safe (secure-json-parse, like Fastify's own), an empty body
 * is "no body", and an integer beyond 2^53 is refused with `error_validation` instead of being silently
 * rounded (D12: int64 ids are never rounded).
 */
import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { validationError } from './errors.ts';

// A run of 16+ digits is the only way an unsafe integer can appear in the text; check precisely only then.
const LONG_DIGIT_RUN = /\d{16,}/;

function rejectUnsafeIntegers(key: string, value: unknown): unknown {
  if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)) {
    throw validationError(key === '' ? 'body' : key, 'integer exceeds 2^53-1 and would lose precision');
  }
  return value;
}

/**
 * Registers the parser for `application/json`, `+json` media types and `text/plain` (P35: a JSON body sent as
 * `text/plain`, as `fetch` and some HTTP tools do by default, is read as JSON) on `app`.
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser(
    /^(application\/([a-z.-]+\+)?json|text\/plain)(;|$)/,
    { parseAs: 'string' },
    (_request, body, done) => {
      const text = String(body);
      if (text.trim() === '') return done(null, undefined);
      try {
        const reviver = LONG_DIGIT_RUN.test(text) ? rejectUnsafeIntegers : undefined;
        done(null, secureJson.parse(text, reviver, { protoAction: 'remove', constructorAction: 'remove' }));
      } catch (error) {
        if (error instanceof SyntaxError) done(validationError('body', `malformed JSON: ${error.message}`));
        // A reviver walking thousands of nested arrays overflows the stack (RangeError): refuse, never a 500.
        else if (error instanceof RangeError) done(validationError('body', 'JSON nested too deeply'));
        else done(error as Error);
      }
    },
  );
}
