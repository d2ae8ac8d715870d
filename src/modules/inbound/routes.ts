/** Routes of the inbound group (spec §4.1). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Runtime } from '../../runtime.ts';

export const inboundRoutes: FastifyPluginAsyncTypebox<{ runtime: Runtime }> = async () => {};
