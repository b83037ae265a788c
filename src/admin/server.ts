/**
 * The admin server: XML-RPC over HTTP POST /RPC2 (MS-FSCADM 2.2), on
 * fastify. Every failure inside a call becomes an XML-RPC fault with
 * faultCode 1 (2.2.7); the HTTP layer answers 405 to other methods, 404 to
 * other paths, 413 past the body limit, 401 without the bearer token (when
 * one is required). A malformed request never takes the server down.
 */

import { timingSafeEqual, createHash } from 'node:crypto';
import Fastify, { type FastifyInstance, type RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { isTrawlError } from '../core/errors.ts';
import type { CrawlerService } from '../service/crawler-service.ts';
import { dispatch } from './methods.ts';
import { encodeFault, encodeMethodResponse, parseMethodCall } from './xmlrpc.ts';

export interface AdminServerOptions {
  readonly service: CrawlerService;
  readonly log: Logger;
  /** Bearer token required on every request, when set. */
  readonly token?: string;
  /** Largest request body, bytes (default 16 MiB). */
  readonly bodyLimitBytes?: number;
}

/** MS-FSCADM 2.2.7: the fault code is always 1. */
export const FAULT_CODE = 1;

function sameToken(given: string, expected: string): boolean {
  // Compare digests, so the comparison takes the same time whatever the lengths.
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

export function buildAdminServer(o: AdminServerOptions): FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, Logger> {
  // fastify's own per-request lines only at warn and above; the calls are logged below.
  const app = Fastify({ loggerInstance: o.log.child({ component: 'http' }, { level: 'warn' }), bodyLimit: o.bodyLimitBytes ?? 16 * 1024 * 1024 });
  // XML-RPC bodies are taken raw, whatever Content-Type the client sends.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  app.addHook('onRequest', async (req, reply) => {
    if (o.token === undefined) return;
    const auth = req.headers.authorization ?? '';
    const given = auth.startsWith('Bearer ') ? auth.slice(7) : '';
    if (!sameToken(given, o.token)) {
      reply.code(401).header('www-authenticate', 'Bearer realm="trawl"').type('text/plain').send('a bearer token is required\n');
    }
  });

  app.post('/RPC2', async (req, reply) => {
    reply.type('text/xml; charset=utf-8');
    const body = req.body instanceof Buffer ? req.body : Buffer.alloc(0);
    let name = '(unparsed)';
    try {
      const call = parseMethodCall(body);
      name = call.methodName;
      const value = await dispatch(o.service, call.methodName, call.params);
      o.log.debug({ method: name }, 'xml-rpc call');
      return encodeMethodResponse(value);
    } catch (err) {
      const message = isTrawlError(err) ? `${err.code}: ${err.message}` : `TRAWL_ERR_INTERNAL: ${(err as Error).message}`;
      if (isTrawlError(err)) o.log.info({ method: name, code: err.code }, err.message);
      else o.log.error({ method: name, err }, 'xml-rpc method failed');
      return encodeFault(FAULT_CODE, message);
    }
  });
  app.route({
    method: ['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'],
    url: '/RPC2',
    handler: async (_req, reply) => reply.code(405).header('allow', 'POST').type('text/plain').send('XML-RPC takes POST only\n'),
  });
  app.setErrorHandler(async (e, _req, reply) => {
    const err = e as Error & { statusCode?: number };
    const status = err.statusCode ?? 500;
    if (status === 413) return reply.code(413).type('text/plain').send('request body too large\n');
    o.log.error({ err }, 'admin server error');
    return reply.code(status).type('text/plain').send(`${err.message}\n`);
  });
  return app;
}
