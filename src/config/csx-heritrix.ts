/**
 * CiteSeerX's `csx-heritrix.xml` (CiteSeerX Crawler Interface, "CSX
 * Configuration"), read as operators have it, into the jms sink it
 * describes (`trawl crawl --citeseerx FILE`, `trawl serve --citeseerx FILE`).
 *
 *   serviceConfiguration/edu/psu/citeseerx
 *     heritrix/jms      ingestionChannel   → ingestion_queue
 *                       repositoryID       → repository_id
 *                       hubLinkIndicator   → hub_link_indicator (hubs; articles: the
 *                                            profile's .*(\.(pdf))(\.(gz))?)
 *                       newSubmissionsChannel, statusUpdateChannel,
 *                       submissionProfile  → warnings: not applied
 *     messaging/jmsProvider
 *                       url                → broker_url (tcp:// mapped to STOMP, a sink note)
 *                       clientID           → client_id
 *                       queue {name, role, acknowledgeMode}: the ingestion
 *                       queue must be a producer queue; the others are not used
 *     utility/ConfigurationManager/autoSave: nothing to apply (trawl never writes the file)
 *
 * The repository root is not in the file (Heritrix's is its jobs/ directory):
 * it is given beside it (`--repository-root`). Every element trawl does not
 * apply is a warning naming it; the file's own errors (not XML, no
 * repositoryID, no url) are refused with the element's path.
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
  readonly clientId?: string | undefined;
  readonly hubLinkIndicator?: string | undefined;
}

export interface CsxConfig {
  readonly sink: CsxSinkSettings;
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

export function readCsxHeritrix(file: string, repositoryRoot: string): CsxConfig {
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
  for (const c of jms.children) {
    const p = `${jmsPath}/${c.name}`;
    if (c.name === 'repositoryID' || c.name === 'ingestionChannel' || c.name === 'hubLinkIndicator') continue;
    if (c.name === 'newSubmissionsChannel') notApplied(p, `not applied: this version of trawl does not consume URL Submission Messages (${text(c) ?? ''})`);
    else if (c.name === 'statusUpdateChannel') notApplied(p, `not applied: this version of trawl sends no URL Status Messages (${text(c) ?? ''})`);
    else if (c.name === 'submissionProfile') notApplied(p, 'not applied: no submitted jobs in this version of trawl');
    else notApplied(p, 'not an element trawl knows; ignored');
  }

  const providerPath = `${base}/messaging/jmsProvider`;
  const provider = child(child(csx, 'messaging'), 'jmsProvider') ?? refuse(providerPath, 'missing');
  const brokerUrl = text(child(provider, 'url')) ?? refuse(`${providerPath}/url`, 'missing or empty: the ActiveMQ broker\'s URL');
  const clientId = text(child(provider, 'clientID'));
  let ingestionRole: string | undefined;
  for (const c of provider.children) {
    const p = `${providerPath}/${c.name}`;
    if (c.name === 'url' || c.name === 'clientID') continue;
    if (c.name !== 'queue') {
      notApplied(p, 'not an element trawl knows; ignored');
      continue;
    }
    const name = text(child(c, 'name')) ?? '';
    const role = text(child(c, 'role'));
    const qp = `${p}[name=${name}]`;
    if (name === ingestionQueue) {
      ingestionRole = role ?? '';
      if (role !== 'producer') refuse(`${qp}/role`, `the ingestion queue must have the role producer, not ${JSON.stringify(role ?? '')}`);
      continue;
    }
    notApplied(qp, `not applied: trawl uses only the ingestion queue ${ingestionQueue} in this version`);
  }
  if (ingestionRole === undefined) notApplied(`${providerPath}/queue`, `no queue named ${ingestionQueue} (the ingestionChannel); trawl sends to it as a producer anyway`);

  const utilityPath = `${base}/utility`;
  for (const c of child(csx, 'utility')?.children ?? []) {
    if (c.name === 'ConfigurationManager' && c.children.every((g) => g.name === 'autoSave' && text(g) !== 'true')) continue;
    notApplied(`${utilityPath}/${c.name}`, 'not applied: trawl never writes the file back');
  }
  for (const c of csx.children) {
    if (c.name !== 'heritrix' && c.name !== 'messaging' && c.name !== 'utility') notApplied(`${base}/${c.name}`, 'not an element trawl knows; ignored');
  }

  return {
    sink: { type: 'jms', repositoryRoot, repositoryId, brokerUrl, ingestionQueue, ...(clientId !== undefined ? { clientId } : {}), ...(hubLinkIndicator !== undefined ? { hubLinkIndicator } : {}) },
    warnings,
  };
}
