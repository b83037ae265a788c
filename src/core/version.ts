import pkg from '../../package.json' with { type: 'json' };

/** trawl's version, from package.json. */
export const VERSION: string = pkg.version;

/** The product token robots.txt groups are matched against (RFC 9309 2.2.1). */
export const PRODUCT_TOKEN = 'trawl';

/** The default User-Agent: names trawl and its version. */
export const DEFAULT_USER_AGENT = `${PRODUCT_TOKEN}/${VERSION}`;
