/**
 * A PostgreSQL store URL as messages and summaries show it. Apart from
 * connection.ts so that showing one does not load pg.
 */

/** Is `spec` a PostgreSQL store URL (postgres:// or postgresql://)? */
export const isPostgresUrl = (spec: string): boolean => /^postgres(ql)?:\/\//i.test(spec);

/** The URL as messages show it: the password, if any (in the userinfo or a `password` parameter), replaced by ********. */
export function maskStoreUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '********';
    for (const k of [...u.searchParams.keys()]) if (/pass/i.test(k)) u.searchParams.set(k, '********');
    return u.href;
  } catch {
    return url.replace(/(\/\/[^:/@]*:)[^@]*@/, '$1********@');
  }
}
