/**
 * CiteSeerX's User Submission profile (the Heritrix order.xml at the end of
 * the CiteSeerX Crawler Interface): the crawl behaviour it sets that trawl
 * has parameters for, applied to a collection's settings where the
 * collection leaves those parameters at their defaults.
 *
 *   order.xml                                  trawl
 *   http-headers user-agent, from            → headers  User-Agent, From
 *   frontier delay-factor 4.0                → trawl_politeness.delay_factor 4 (and delay 0:
 *            min-delay-ms 2000, max 20000    →   min_delay 2, max_delay 20   Heritrix has no other delay)
 *            max-retries 3                   → http_errors net: RETRY:3
 *            retry-delay-seconds 10          → trawl_politeness.retry_delay 10
 *   FetchHTTP send-referer true              → trawl_http.send_referer (already the default)
 *   robots-honoring-policy classic           → robots.txt obeyed (the default), token from the User-Agent: CiteSeerBot
 *
 * Its scope (one hop from the seeds) and canonicalization rules belong to
 * submitted jobs, not to the collections an operator configured.
 */

import { childSection, cloneCollection, type CollectionConfig } from './model.ts';

export const USER_SUBMISSION_PROFILE = {
  userAgent: 'Mozilla/5.0 (compatible; CiteSeerBot/1.12.1 +http://citeseerx.ist.psu.edu/bot.html)',
  from: 'citeseerx-bot@ist.psu.edu',
  delayFactor: 4.0,
  minDelayS: 2,
  maxDelayS: 20,
  maxRetries: 3,
  retryDelayS: 10,
} as const;

/**
 * The collection with the profile's values for the parameters its
 * configuration does not set (at the collection level), and what was
 * applied (parameter value). The configuration given is not changed.
 */
export function withSubmissionProfile(c: CollectionConfig): { config: CollectionConfig; applied: string[] } {
  const p = USER_SUBMISSION_PROFILE;
  const applied: string[] = [];
  const out = cloneCollection(c);
  const root = out.root;
  const set = (node: typeof root, name: string, value: number | string | readonly string[], said: string): void => {
    if (node.attribs.has(name)) return;
    node.attribs.set(name, value);
    applied.push(said);
  };
  const headers = root.attribs.get('headers');
  const lines = Array.isArray(headers) ? [...(headers as readonly string[])] : [];
  const named = (n: string): boolean => lines.some((l) => l.slice(0, l.indexOf(':')).trim().toLowerCase() === n);
  const added: string[] = [];
  if (!named('user-agent')) added.push(`User-Agent: ${p.userAgent}`);
  if (!named('from')) added.push(`From: ${p.from}`);
  if (added.length > 0) {
    root.attribs.set('headers', [...lines, ...added]);
    applied.push(`headers ${added.join(', ')}`);
  }
  // Heritrix has no delay between request starts besides the delay factor's.
  set(root, 'delay', 0, 'delay 0');
  const politeness = childSection(root, 'trawl_politeness');
  set(politeness, 'delay_factor', p.delayFactor, `trawl_politeness delay_factor ${p.delayFactor}`);
  set(politeness, 'min_delay', p.minDelayS, `min_delay ${p.minDelayS}`);
  set(politeness, 'max_delay', p.maxDelayS, `max_delay ${p.maxDelayS}`);
  set(politeness, 'retry_delay', p.retryDelayS, `retry_delay ${p.retryDelayS}`);
  set(childSection(root, 'http_errors'), 'net', `DELETE:3, RETRY:${p.maxRetries}`, `http_errors net DELETE:3, RETRY:${p.maxRetries}`);
  return { config: out, applied };
}
