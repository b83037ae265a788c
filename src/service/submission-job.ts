/**
 * CiteSeerX submitted jobs (docs/citeseerx.md "Submitted jobs"): a URL
 * Submission Message (JID, URL, DESC) read, and the collection that crawls
 * it made from a submission profile.
 *
 *   MapMessage as jms-map-xml ──► parseSubmission ──► { jid, urls, desc } | a problem
 *   profile (a collection's configuration, or USER_SUBMISSION_PROFILE_XML)
 *     + submission ──► jobConfig: the profile with the URLs as start_uris,
 *                      trawl_submission { job_id, description }, no submission_queue
 *   JID ──► jobCollectionName: the JID itself when it is a safe name, else job-<SHA-1>
 *
 * The built-in profile is the document's CSX_User_Submission order.xml as
 * MS-FSCCFG says it: depth 1 from the seeds (links and redirects to any
 * host), 2 s between requests to a site (the order's min-delay-ms; its
 * delay-factor is a crawl setting of its own), its user agent and From
 * address, its canonicalization rules (lower-case, user info, www<N>,
 * session IDs, query fix-up), and every type fetched, so that the sinks'
 * accept_pattern and hub_link_indicator decide what is written.
 */

import { hash } from 'node:crypto';
import { readXmlTree, type XmlElement } from '../core/xml.ts';
import { cloneCollection, emptySection, type CollectionConfig } from '../config/model.ts';
import { readConfigXml } from '../config/xml-reader.ts';

export interface Submission {
  readonly jid: string;
  readonly urls: readonly string[];
  readonly desc: string;
}

/** The User Submission profile's request headers (its order.xml http-headers). */
export const USER_SUBMISSION_AGENT = 'Mozilla/5.0 (compatible; CiteSeerBot/1.12.1 +http://citeseerx.ist.psu.edu/bot.html)';
export const USER_SUBMISSION_FROM = 'citeseerx-bot@ist.psu.edu';

/** The exclude_exts default without the compressed files papers come in (.gz, .z) and PostScript. */
const PROFILE_EXCLUDE_EXTS = ['.jpg', '.jpeg', '.ico', '.tif', '.png', '.bmp', '.gif', '.wmf', '.avi', '.mpg', '.wmv', '.wma', '.ram', '.asx', '.ASF', '.mp3', '.wav', '.ogg', '.ra', '.aac', '.m4a', '.vmarc', '.iso', '.img', '.rpm', '.cab', '.rar', '.ace', '.hqx', '.swf', '.exe', '.java', '.jar', '.prz', '.wrl', '.midr', '.mso'];

const member = (v: string): string => `<member>${v.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</member>`;

/** The document's CSX_User_Submission profile as an MS-FSCCFG collection (its name is replaced by each job's). */
export const USER_SUBMISSION_PROFILE_XML = `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig><DomainSpecification name="CSX_User_Submission">
  <attrib name="info" type="string">Standard profile for indexing user submissions</attrib>
  <attrib name="delay" type="real">2</attrib>
  <attrib name="refresh" type="real">5256000</attrib>
  <attrib name="headers" type="list-string">${member(`User-Agent: ${USER_SUBMISSION_AGENT}`)}${member(`From: ${USER_SUBMISSION_FROM}`)}</attrib>
  <attrib name="allowed_types" type="list-string">${member('*/*')}</attrib>
  <attrib name="exclude_exts" type="list-string">${PROFILE_EXCLUDE_EXTS.map(member).join('')}</attrib>
  <section name="crawlmode">
    <attrib name="mode" type="string">DEPTH:1</attrib>
    <attrib name="fwdlinks" type="boolean">yes</attrib>
    <attrib name="fwdredirects" type="boolean">yes</attrib>
    <attrib name="reset_level" type="boolean">no</attrib>
  </section>
  <section name="trawl_urls">
    <attrib name="canonicalization" type="list-string">${['lowercase-scheme-host', 'strip-userinfo', 'strip-wwwn', 'drop-default-port', 'drop-fragment', 'normalize-percent-encoding', 'strip-session-ids', 'fixup-query'].map(member).join('')}</attrib>
  </section>
</DomainSpecification></CrawlerConfig>
`;

let builtIn: CollectionConfig | undefined;

/** The built-in User Submission profile. */
export function userSubmissionProfile(): CollectionConfig {
  if (!builtIn) {
    const r = readConfigXml(USER_SUBMISSION_PROFILE_XML, 'the User Submission profile');
    const c = r.document.collections[0];
    const errors = r.diagnostics.filter((d) => d.severity === 'error');
    if (!c || errors.length > 0) throw new Error(`the built-in User Submission profile does not read: ${errors.map((d) => d.message).join('; ')}`);
    builtIn = c;
  }
  return builtIn;
}

/**
 * The collection a JID's job is: the JID itself when it is a name safe as a
 * directory and a configuration name (letters, digits, . _ -, not starting
 * with a dot, at most 100 characters), else `job-` and the JID's SHA-1.
 */
export function jobCollectionName(jid: string): string {
  return /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$/.test(jid) ? jid : `job-${hash('sha1', jid, 'hex')}`;
}

/** The job's configuration: the profile, with the submission's URLs as its start URIs, marked as the JID's job. */
export function jobConfig(profile: CollectionConfig, name: string, s: Submission): CollectionConfig {
  const c = cloneCollection(profile, name);
  c.root.attribs.set('start_uris', [...s.urls]);
  c.root.attribs.delete('start_uri_files');
  const sub = emptySection();
  sub.attribs.set('job_id', s.jid);
  if (s.desc !== '') sub.attribs.set('description', s.desc);
  c.root.sections.set('trawl_submission', sub);
  // A job crawls; only its profile takes submissions.
  for (const sink of c.root.sections.get('trawl_sinks')?.sections.values() ?? []) sink.attribs.delete('submission_queue');
  for (const node of c.nodes.values()) for (const sink of node.sections.get('trawl_sinks')?.sections.values() ?? []) sink.attribs.delete('submission_queue');
  return c;
}

/** The text of an XStream value element (`<string>`, `<int>`, …); undefined for `<null/>`. */
function valueOf(e: XmlElement): string | undefined {
  return e.name === 'null' ? undefined : e.text;
}

/**
 * A URL Submission Message's fields, from its body as ActiveMQ writes a
 * MapMessage for a jms-map-xml subscription (XStream's map: `<map><entry>
 * <string>JID</string><string>…</string></entry>…</map>`). URL holds one or
 * more absolute http(s) URLs, one a line; blank lines are ignored.
 */
export function parseSubmission(body: string): Submission | { readonly problem: string } {
  let root: XmlElement;
  try {
    root = readXmlTree(Buffer.from(body, 'utf8'), { file: 'message', malformedCode: 'TRAWL_ERR_IO', doctypeCode: 'TRAWL_ERR_IO', encodingCode: 'TRAWL_ERR_IO' });
  } catch (err) {
    return { problem: `not a MapMessage (its body is not jms-map-xml: ${(err as Error).message})` };
  }
  if (root.name !== 'map') return { problem: `not a MapMessage (its body is <${root.name}>, not a jms-map-xml <map>)` };
  const fields = new Map<string, string | undefined>();
  for (const entry of root.children) {
    if (entry.name !== 'entry' || entry.children.length !== 2) continue;
    fields.set(entry.children[0]!.text, valueOf(entry.children[1]!));
  }
  const jid = fields.get('JID')?.trim();
  if (!jid) return { problem: 'the message has no JID' };
  const urlText = fields.get('URL');
  if (urlText === undefined || urlText.trim() === '') return { problem: `the message of job ${jid} has no URL` };
  const urls: string[] = [];
  for (const line of urlText.split(/\r?\n/)) {
    const u = line.trim();
    if (u === '') continue;
    if (!URL.canParse(u) || !/^https?:$/.test(new URL(u).protocol)) return { problem: `the message of job ${jid} has a URL that is not an absolute http(s) URL: ${JSON.stringify(u.slice(0, 200))}` };
    urls.push(u);
  }
  return { jid, urls, desc: fields.get('DESC') ?? '' };
}
