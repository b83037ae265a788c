/**
 * Cookies (use_cookies): before the request, the jar's Cookie header for
 * the URL (after a `Cookie` line of the configured `headers`, if any);
 * after it, every `Set-Cookie` of the response into the jar. It sits inside
 * the authentication interceptor, so each request of a challenge exchange
 * carries the cookies the one before it was given.
 *
 * It is in the fetcher's list only when use_cookies is on: a collection
 * without cookies pays nothing per page.
 */

import type { CookieJar } from '../cookies.ts';
import { headerValues, type FetchOutcome } from '../fetch-types.ts';
import type { FetchInterceptor } from '../interceptor.ts';

export function cookieInterceptor(jar: CookieJar): FetchInterceptor {
  return (next) => (call) => {
    const href = call.request.url.href;
    const fromJar = jar.getCookieString(href);
    const configured = call.request.headers.cookie;
    if (fromJar !== '') call.headers.cookie = configured ? `${configured}; ${fromJar}` : fromJar;
    else if (configured) call.headers.cookie = configured;
    else delete call.headers.cookie;
    return next(call).then((o: FetchOutcome) => {
      if (o.kind === 'response') for (const v of headerValues(o.rawHeaders, 'set-cookie')) jar.setCookie(v, href);
      return o;
    });
  };
}
