/**
 * The request as the collection's protocol settings make it: the method,
 * body and content type of a POST (post_payload, or a rendered page's own), Accept-Encoding (accept_compression) and
 * HTTP/1.0 mode (use_http_1_1 off: no keep-alive, no compression), and the
 * Referer (the page the URI was found on, when trawl_http send_referer). The
 * configured header lines (User-Agent and the rest of `headers`) come with
 * the request and are in `call.headers` already.
 */

import type { FetchInterceptor } from '../interceptor.ts';

/** What the decoder in the core reads (bounded-exchange.ts `decoderFor`). */
const ACCEPT_ENCODING = 'gzip, deflate, br';

export const requestHeaders: FetchInterceptor = (next) => (call) => {
  const req = call.request;
  const headers = call.headers;
  headers['accept-encoding'] = req.acceptCompression && !req.http10 ? ACCEPT_ENCODING : 'identity';
  // undici always speaks HTTP/1.1 on the wire; Connection: close is what is left of 1.0.
  if (req.http10) headers.connection = 'close';
  if (req.referer !== undefined) headers.referer = req.referer;
  if (req.postBody !== undefined) {
    call.method = 'POST';
    call.body = req.postBody;
    headers['content-type'] = req.postContentType ?? 'application/x-www-form-urlencoded';
  }
  return next(call);
};
