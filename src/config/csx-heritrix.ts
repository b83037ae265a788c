/**
 * CiteSeerX's `csx-heritrix.xml` (CiteSeerX Crawler Interface, "CSX
 * Configuration"), read as operators have it, into the jms sink it
 * describes (`trawl crawl --citeseerx FILE`, `trawl serve --citeseerx FILE`)
 * and, for `trawl serve`, the queue URL Submission Messages come from.
 *
 *   serviceConfiguration/edu/psu/citeseerx
 *     heritrix/jms      ingestionChannel      → ingestion_queue
 *                       statusUpdateChannel   → status_queue (submitted jobs only)
 *                       newSubmissionsChannel → the submissions queue trawl serve consumes
 *                                               (trawl crawl: a warning, nothing to consume)
 *                       submissionProfile     → the profile of submitted jobs: the daemon's
 *                                               collection of that name, else the built-in
 *                                               User Submission profile
 *                       repositoryID          → repository_id
 *                       hubLinkIndicator      → hub_link_indicator (hubs; articles: the
 *                                               profile's .*(\.(pdf))(\.(gz))?)
 *     messaging/jmsProvider
 *                       url                → broker_url (tcp:// mapped to STOMP, a sink note)
 *                       clientID           → client_id
 *                       queue {name, role, acknowledgeMode}: the channels' queues must have
 *                         the roles the document gives them (newSubmissions consumer, the
 *                         others producer); a consumer is acknowledged as CLIENT_ACKNOWLEDGE
 *                         whatever its mode says (a warning otherwise)
 *     utility/ConfigurationManager/autoSave: nothing to apply (trawl never writes the file)
 *
 * The repository root is not in the file (Heritrix's is its jobs/ directory):
 * it is given beside it (`--repository-root`). Every element trawl does not
 * apply is a warning naming it; the file's own errors (not XML, no
 * repositoryID, no url, a queue with the wrong role) are refused with the
 * element's path.
 */

import { readFileSync } from 'node:fs';
import { TrawlError } from '../core/errors.ts';
import { readXmlTree, type XmlElement } from '../core/xml.ts';

/** The jms sink settings the file describes (as `trawl_sinks.<sink>` keys). */
export interface CsxSinkSettings {
  readonly type: 'jms';
  readonly repositoryRoot: string;
  readonly repositoryId: string;
  readonly brokerUrl: string;
  readonly ingestionQueue: string;
  readonly statusQueue?: string | undefined;
  readonly clientId?: string | undefined;
  readonly hubLinkIndicator?: string | undefined;
}

/** Where URL Submission Messages come from, and the profile of the jobs they make (trawl serve). */
export interface CsxSubmissions {
  readonly queue: string;
  /** submissionProfile: a collection of the daemon by that name, else the built-in User Submission profile. */
  readonly profile: string;
}

/** The document's submission profile, which trawl has built in (service/submission-profile.ts). */
export const USER_SUBMISSION_PROFILE = 'CSX_User_Submission';

export interface CsxConfig {
  readonly sink: CsxSinkSettings;
  /** Absent without newSubmissionsChannel, or for trawl crawl. */
  readonly submissions?: CsxSubmissions | undefined;
  /** What the file asks for that trawl does not apply, each naming its element. */
  readonly warnings: string[];
}

/** The name of the sink the file's settings become in each collection. */
export const CSX_SINK_NAME = 'citeseerx';

function child(e: XmlElement | undefined, name: string): XmlElement | undefined {
  return e?.children.find((c) => c.name === name);
}

function text(e: XmlElement | undefined): string | undefined {
  const t = e?.text.trim();
  return t === undefined || t === '' ? undefined : t;
}

/** `serving`: trawl serve, which consumes newSubmissionsChannel; trawl crawl says it does not. */
export function readCsxHeritrix(file: string, repositoryRoot: string, serving = false): CsxConfig {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    throw new TrawlError('TRAWL_ERR_IO', `cannot read the CiteSeerX configuration ${file}: ${(err as Error).message}`);
  }
  const root = readXmlTree(bytes, { file, malformedCode: 'TRAWL_ERR_CONFIG_XML', doctypeCode: 'TRAWL_ERR_CONFIG_DTD', encodingCode: 'TRAWL_ERR_CONFIG_ENCODING' });
  const refuse = (path: string, what: string): never => {
    throw new TrawlError('TRAWL_ERR_CONFIG_STRUCTURE', `${file}: ${path}: ${what}`);
  };
  if (root.name !== 'serviceConfiguration') refuse(root.name, 'the root element is not serviceConfiguration');
  const base = '/serviceConfiguration/edu/psu/citeseerx';
  const csx = child(child(child(root, 'edu'), 'psu'), 'citeseerx') ?? refuse(base, 'missing');
  const warnings: string[] = [];
  const notApplied = (path: string, why: string): void => void warnings.push(`${file}: ${path}: ${why}`);

  const jmsPath = `${base}/heritrix/jms`;
  const jms = child(child(csx, 'heritrix'), 'jms') ?? refuse(jmsPath, 'missing');
  for (const c of child(csx, 'heritrix')?.children ?? []) if (c.name !== 'jms') notApplied(`${base}/heritrix/${c.name}`, 'not an element trawl knows; ignored');
  const repositoryId = text(child(jms, 'repositoryID')) ?? refuse(`${jmsPath}/repositoryID`, 'missing or empty: every crawler needs its unique repository ID');
  const ingestionQueue = text(child(jms, 'ingestionChannel')) ?? refuse(`${jmsPath}/ingestionChannel`, 'missing or empty');
  const hubLinkIndicator = text(child(jms, 'hubLinkIndicator'));
  const statusQueue = text(child(jms, 'statusUpdateChannel'));
  const submissionQueue = text(child(jms, 'newSubmissionsChannel'));
  const profile = text(child(jms, 'submissionProfile'));
  const known = new Set(['repositoryID', 'ingestionChannel', 'hubLinkIndicator', 'statusUpdateChannel', 'newSubmissionsChannel', 'submissionProfile']);
  for (const c of jms.children) if (!known.has(c.name)) notApplied(`${jmsPath}/${c.name}`, 'not an element trawl knows; ignored');
  if (submissionQueue !== undefined && !serving) notApplied(`${jmsPath}/newSubmissionsChannel`, `not applied by trawl crawl: only trawl serve consumes URL Submission Messages (${submissionQueue})`);
  if (profile !== undefined && submissionQueue === undefined) notApplied(`${jmsPath}/submissionProfile`, 'not applied: there is no newSubmissionsChannel to take submissions from');

  const providerPath = `${base}/messaging/jmsProvider`;
  const provider = child(child(csx, 'messaging'), 'jmsProvider') ?? refuse(providerPath, 'missing');
  const brokerUrl = text(child(provider, 'url')) ?? refuse(`${providerPath}/url`, 'missing or empty: the ActiveMQ broker\'s URL');
  const clientId = text(child(provider, 'clientID'));
  // The channels and the role the document gives each one's queue.
  const roles = new Map<string, { role: 'producer' | 'consumer'; channel: string }>([[ingestionQueue, { role: 'producer', channel: 'ingestionChannel' }]]);
  if (statusQueue !== undefined) roles.set(statusQueue, { role: 'producer', channel: 'statusUpdateChannel' });
  if (submissionQueue !== undefined) {
    if (roles.has(submissionQueue)) refuse(`${jmsPath}/newSubmissionsChannel`, `${submissionQueue} is also a queue trawl sends to: submissions would be read back from it`);
    roles.set(submissionQueue, { role: 'consumer', channel: 'newSubmissionsChannel' });
  }
  const listed = new Set<string>();
  for (const c of provider.children) {
    const p = `${providerPath}/${c.name}`;
    if (c.name === 'url' || c.name === 'clientID') continue;
    if (c.name !== 'queue') {
      notApplied(p, 'not an element trawl knows; ignored');
      continue;
    }
    const name = text(child(c, 'name')) ?? '';
    const role = text(child(c, 'role'));
    const mode = text(child(c, 'acknowledgeMode'));
    const qp = `${p}[name=${name}]`;
    const want = roles.get(name);
    if (want === undefined) {
      notApplied(qp, 'not applied: no channel of heritrix/jms names this queue');
      continue;
    }
    listed.add(name);
    if (role !== want.role) refuse(`${qp}/role`, `the ${want.channel} queue must have the role ${want.role}, not ${JSON.stringify(role ?? '')}`);
    if (mode !== undefined && !['CLIENT_ACKNOWLEDGE', 'AUTO_ACKNOWLEDGE', 'DUPS_OK_ACKNOWLEDGE', 'SESSION_TRANSACTED'].includes(mode)) notApplied(`${qp}/acknowledgeMode`, `not a JMS acknowledge mode (${mode}); ignored`);
    else if (want.role === 'consumer' && mode !== undefined && mode !== 'CLIENT_ACKNOWLEDGE') {
      notApplied(`${qp}/acknowledgeMode`, `${mode} not applied: trawl acknowledges each URL Submission Message once its job is stored, as CLIENT_ACKNOWLEDGE does, so that a crash cannot lose it`);
    }
  }
  for (const [name, { role, channel }] of roles) {
    if (!listed.has(name) && (channel !== 'newSubmissionsChannel' || serving)) notApplied(`${providerPath}/queue`, `no queue named ${name} (the ${channel}); trawl uses it as a ${role} anyway`);
  }

  const utilityPath = `${base}/utility`;
  for (const c of child(csx, 'utility')?.children ?? []) {
    if (c.name === 'ConfigurationManager' && c.children.every((g) => g.name === 'autoSave' && text(g) !== 'true')) continue;
    notApplied(`${utilityPath}/${c.name}`, 'not applied: trawl never writes the file back');
  }
  for (const c of csx.children) {
    if (c.name !== 'heritrix' && c.name !== 'messaging' && c.name !== 'utility') notApplied(`${base}/${c.name}`, 'not an element trawl knows; ignored');
  }

  return {
    sink: {
      type: 'jms', repositoryRoot, repositoryId, brokerUrl, ingestionQueue,
      ...(statusQueue !== undefined ? { statusQueue } : {}), ...(clientId !== undefined ? { clientId } : {}), ...(hubLinkIndicator !== undefined ? { hubLinkIndicator } : {}),
    },
    ...(submissionQueue !== undefined && serving ? { submissions: { queue: submissionQueue, profile: profile ?? USER_SUBMISSION_PROFILE } } : {}),
    warnings,
  };
}
