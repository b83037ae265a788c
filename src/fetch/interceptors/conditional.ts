/**
 * Conditional GET (if_modified_since on): the validators of the stored
 * record go with the request as If-None-Match and If-Modified-Since
 * (RFC 9110 13.1.2, 13.1.3), and a server whose page did not change answers
 * 304 without the body. The engine reads the 304; this only asks.
 */

import type { FetchInterceptor } from '../interceptor.ts';

export const conditionalGet: FetchInterceptor = (next) => (call) => {
  const { ifNoneMatch, ifModifiedSince } = call.request;
  if (ifNoneMatch) call.headers['if-none-match'] = ifNoneMatch;
  if (ifModifiedSince) call.headers['if-modified-since'] = ifModifiedSince;
  return next(call);
};
