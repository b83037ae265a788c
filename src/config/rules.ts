/**
 * The MUST rules of MS-FSCCFG that tie parameters together. Each check runs
 * on the collection as written and again under every <Node> override, so a
 * node cannot break a rule the collection keeps.
 */

import type { Diagnostic } from './diagnostics.ts';
import { effectiveTree, resolveSettings, SCOPE_SECTIONS, subcollectionNames } from './effective.ts';
import { locationOf, sameValue, type CollectionConfig, type SectionNode } from './model.ts';
import { COLLECTION, findAttrib, findSection } from './registry.ts';
import { backtrackingRisk, makeSafe } from '../core/safe-regex.ts';
import { AVAILABLE_SINK_TYPES } from '../core/sink-types.ts';
import { brokerAddress } from '../core/broker-url.ts';
import { parseRewriteRule } from './values.ts';
import { maskUrl } from './secrets.ts';

export function checkRules(c: CollectionConfig, out: Diagnostic[]): void {
  checkRegexRisks(c, out);
  const nodes: (string | undefined)[] = [undefined, ...c.nodes.keys()];
  const seen = new Set<string>();
  for (const node of nodes) {
    const before = out.length;
    checkOne(c, node, out);
    // A rule broken by the collection itself is reported once, not once per node.
    for (let i = out.length - 1; i >= before; i--) {
      const key = `${out[i]!.code}|${out[i]!.message.replace(/ under <Node name="[^"]*">/, '')}`;
      if (seen.has(key)) out.splice(i, 1);
      else seen.add(key);
    }
  }
}

function checkOne(c: CollectionConfig, node: string | undefined, out: Diagnostic[]): void {
  const tree = effectiveTree(c, node);
  // Under a node, the override that breaks the rule is where it is reported: the
  // parameter itself, else a related one (causes) that the node sets.
  const at = (path: string, causes: readonly string[]): Pick<Diagnostic, 'location'> => {
    const nodeLoc = node !== undefined ? [path, ...causes].map((p) => locationOf(c, `@node:${node}.${p}`)).find((l) => l !== undefined) : undefined;
    const loc = nodeLoc ?? locationOf(c, path) ?? locationOf(c, '');
    return loc ? { location: loc } : {};
  };
  const under = node !== undefined ? ` under <Node name="${node}">` : '';
  const err = (code: Diagnostic['code'], param: string, message: string, severity: Diagnostic['severity'] = 'error', causes: readonly string[] = []): void => {
    out.push({ severity, code, collection: c.name, param, message: message + under, ...at(param, causes) });
  };
  const s = resolveSettings(c, node !== undefined ? { node } : {});

  // 2.2.3: javascript_keep_html MUST NOT be used unless use_javascript is yes.
  if (s.javascriptKeepHtml && !s.useJavascript) {
    err('TRAWL_ERR_CONFIG_RULE', 'javascript_keep_html', 'javascript_keep_html is yes but use_javascript is not; MS-FSCCFG 2.2.3 requires use_javascript for it');
  }

  // 2.2.4.15–16: priority levels begin at 1 and stay within `levels`.
  const wq = s.workqueuePriority;
  for (const [param, value] of [['workqueue_priority.default', wq.default], ['workqueue_priority.start_uri_pri', wq.startUriPri]] as const) {
    if (value > wq.levels) err('TRAWL_ERR_CONFIG_RULE', param, `priority level ${value} does not exist: workqueue_priority.levels is ${wq.levels} (levels are 1 to ${wq.levels})`);
  }
  for (const level of Object.keys(wq.priorityLevels)) {
    if (Number(level) > wq.levels) {
      err('TRAWL_ERR_CONFIG_RULE', `workqueue_priority.${level}`, `priority level section ${level} is beyond workqueue_priority.levels (${wq.levels}); levels are numbered from 1 to levels`);
    }
  }
  if (Object.keys(wq.priorityLevels).length > 0 && wq.popScheme === 'rr') {
    err('TRAWL_ERR_CONFIG_RULE', 'workqueue_priority.pop_scheme', 'priority level sections are used only when pop_scheme is wrr, pri or default (MS-FSCCFG 2.2.4.16); with rr their share is ignored', 'warning');
  }

  // trawl_purge: the purge phase follows a scratch cycle; the other refresh modes decide themselves what a cycle fetches again.
  if (s.purge.enabled && s.refreshMode !== 'scratch') {
    err('TRAWL_ERR_CONFIG_RULE', 'trawl_purge.enabled', `the purge phase runs only with refresh_mode scratch; with ${s.refreshMode} it is off and every known URI is fetched again each cycle`, 'warning');
  }

  // 2.2.4.9: a feeding section holds at least one destination, each with a collection.
  const feeding = tree.sections.get('feeding');
  if (feeding && feeding.sections.size === 0) err('TRAWL_ERR_CONFIG_RULE', 'feeding', 'the feeding section must hold at least one destination section (MS-FSCCFG 2.2.4.9)');
  for (const [name, dest] of Object.entries(s.feeding)) {
    if (dest.collection === undefined || dest.collection === '') {
      err('TRAWL_ERR_CONFIG_RULE', `feeding.${name}`, `feeding destination ${JSON.stringify(name)} has no collection; MS-FSCCFG 2.2.4.9 requires it`);
    }
  }

  // 2.2.4.31: at least one login; autofill needs html_form.
  const logins = tree.sections.get('logins');
  if (logins && logins.sections.size === 0) err('TRAWL_ERR_CONFIG_RULE', 'logins', 'the logins section must hold at least one login section (MS-FSCCFG 2.2.4.31)');
  for (const [name, login] of Object.entries(s.logins)) {
    if (login.autofill === true && login.htmlForm === undefined) {
      err('TRAWL_ERR_CONFIG_RULE', `logins.${name}.autofill`, `login ${JSON.stringify(name)} has autofill yes but no html_form; MS-FSCCFG 2.2.4.31 requires html_form then`);
    }
    const hasTarget = login.site !== undefined && login.site.trim() !== '' && login.form !== undefined && login.form.trim() !== '';
    if (!hasTarget && !(login.autofill === true && login.htmlForm !== undefined)) {
      err('TRAWL_ERR_CONFIG_RULE', `logins.${name}`, `login ${JSON.stringify(name)} has nowhere to submit its form: set site and form (or autofill yes with html_form, whose form's action is then used)`);
    }
    if ((login.sites ?? []).length === 0 && (login.site === undefined || login.site.trim() === '')) {
      err('TRAWL_ERR_CONFIG_RULE', `logins.${name}.sites`, `login ${JSON.stringify(name)} covers no site: set sites (the hosts to log into before crawling them), or site`, 'warning');
    }
  }

  // 2.2.4.24: the adaptive section is used only with refresh_mode adaptive.
  // (Only when it sets something other than the defaults: a complete write-back lists them all.)
  const adaptive = tree.sections.get('adaptive');
  const adaptiveDef = findSection(COLLECTION, 'adaptive')!;
  const adaptiveSet = [...(adaptive?.attribs ?? [])].some(([k, v]) => !sameValue(v, findAttrib(adaptiveDef, k)?.default));
  if (adaptiveSet && s.refreshMode !== 'adaptive') {
    err('TRAWL_ERR_CONFIG_RULE', 'adaptive', `the adaptive section has no effect: refresh_mode is ${s.refreshMode}, not adaptive (MS-FSCCFG 2.2.4.24)`, 'warning');
  }

  if (s.sendLinksTo === c.name) err('TRAWL_ERR_CONFIG_RULE', 'send_links_to', 'send_links_to names this collection itself');

  // trawl_extraction_rulesets: a ruleset applies to one domain, which it must name.
  for (const [name, rs] of Object.entries(s.extractionRulesets)) {
    if (rs.domain === undefined || rs.domain.trim() === '') {
      err('TRAWL_ERR_CONFIG_RULE', `trawl_extraction_rulesets.${name}`, `extraction ruleset ${JSON.stringify(name)} names no domain: set domain, the domain URL its rules apply to (e.g. https://www.example.com)`);
    }
  }

  // trawl_sinks: each sink has what its type needs; a type this version does not deliver to is a warning here
  // (the file is still a valid configuration) and refused when a crawl or the daemon would use it.
  for (const p of sinkProblems(s.sinks).filter((x) => !x.onlyAtUse)) err(p.unsupported ? 'TRAWL_ERR_CONFIG_UNSUPPORTED' : 'TRAWL_ERR_CONFIG_RULE', p.param, p.message, p.severity);

  // 2.2.4.33: sub-collections.
  const subdomains = tree.sections.get('subdomains');
  if (subdomains && subdomains.sections.size === 0) err('TRAWL_ERR_CONFIG_RULE', 'subdomains', 'the subdomains section must hold at least one sub-collection section (MS-FSCCFG 2.2.4.33)');
  for (const name of subcollectionNames(c, node)) {
    const sub = subdomains!.sections.get(name)!;
    if (!hasScopeRule(sub)) {
      err('TRAWL_ERR_CONFIG_RULE', `subdomains.${name}`, `sub-collection ${JSON.stringify(name)} has no include or exclude rules; MS-FSCCFG 2.2.4.33 requires include_domains, exclude_domains, include_uris or exclude_uris to limit its scope`);
    }
    const refresh = sub.attribs.get('refresh');
    if (typeof refresh === 'number' && refresh >= s.refreshMin) {
      err('TRAWL_ERR_CONFIG_RULE', `subdomains.${name}.refresh`, `sub-collection ${JSON.stringify(name)} has refresh ${refresh} min, not lower than the collection's ${s.refreshMin} min; MS-FSCCFG 2.2.4.33 requires it to be lower`, 'error', ['refresh']);
    }
    const subSettings = resolveSettings(c, node !== undefined ? { node, subcollection: name } : { subcollection: name });
    if (subSettings.javascriptKeepHtml && !subSettings.useJavascript) {
      // Only reachable when the sub-collection turns use_javascript off under a collection that keeps HTML.
      err('TRAWL_ERR_CONFIG_RULE', `subdomains.${name}.use_javascript`, `sub-collection ${JSON.stringify(name)} turns use_javascript off while javascript_keep_html is yes`);
    }
  }
}

/** Sink types this version delivers to: one list, in core/sink-types.ts. */
export { AVAILABLE_SINK_TYPES };

export interface SinkProblem {
  readonly param: string;
  readonly message: string;
  /** The type exists but this version cannot deliver to it. */
  readonly unsupported: boolean;
  /** In a configuration file: an error, or a warning when the file is still usable for everything else. */
  readonly severity: 'error' | 'warning';
  /**
   * Reported only where the sink is used (a crawl, CollectionAdd), which
   * refuse every problem: an Elastic YAML file without elasticsearch.host
   * already has its own warning, with its line.
   */
  readonly onlyAtUse: boolean;
}

/** What is wrong with the `trawl_sinks` sections, each naming its parameter. */
export function sinkProblems(sinks: Readonly<Record<string, { type?: string | undefined; outputDir?: string | undefined; url?: string | undefined; repositoryRoot?: string | undefined; repositoryId?: string | undefined; brokerUrl?: string | undefined; ingestionQueue?: string | undefined; statusQueue?: string | undefined; submissionQueue?: string | undefined; hubLinkIndicator?: string | undefined; acceptPattern?: string | undefined }>>): SinkProblem[] {
  const out: SinkProblem[] = [];
  for (const [name, s] of Object.entries(sinks)) {
    const at = `trawl_sinks.${name}`;
    const add = (param: string, message: string, unsupported = false, onlyAtUse = false): void => {
      out.push({ param, message, unsupported, severity: unsupported ? 'warning' : 'error', onlyAtUse });
    };
    if (s.type === undefined) add(`${at}.type`, `${at}.type is missing (one of ${AVAILABLE_SINK_TYPES.join(', ')})`);
    else if (!(AVAILABLE_SINK_TYPES as readonly string[]).includes(s.type)) {
      add(`${at}.type`, `${at}.type ${s.type} is not available in this version of trawl (available: ${AVAILABLE_SINK_TYPES.join(', ')})`, true);
    } else if (s.type === 'file' && !s.outputDir) add(`${at}.output_dir`, `${at}: the file sink needs output_dir`);
    else if (s.type === 'elasticsearch') {
      const u = s.url !== undefined && URL.canParse(s.url) ? new URL(s.url) : undefined;
      if (!s.url) add(`${at}.url`, `${at}: the elasticsearch sink needs url before anything can be fed to it`, false, true);
      else if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) add(`${at}.url`, `${at}.url ${JSON.stringify(maskUrl(s.url))} is not an http(s) URL`);
    } else if (s.type === 'repository' || s.type === 'jms') {
      if (!s.repositoryRoot) add(`${at}.repository_root`, `${at}: the ${s.type} sink needs repository_root (the directory the CiteSeerX ingestion system reads files from)`);
      if (s.type === 'repository' && s.brokerUrl) add(`${at}.broker_url`, `${at}: a repository sink sends no messages; make it type jms to announce its files on broker_url`);
      if (s.type === 'jms') {
        if (!s.repositoryId) add(`${at}.repository_id`, `${at}: the jms sink needs repository_id (sent as REPID: the crawler's unique repository ID)`);
        if (!s.brokerUrl) add(`${at}.broker_url`, `${at}: the jms sink needs broker_url (stomp://host:61613, or the OpenWire tcp://host:61616)`);
        else {
          const b = brokerAddress(s.brokerUrl);
          if ('problem' in b) add(`${at}.broker_url`, `${at}.broker_url ${JSON.stringify(maskUrl(s.brokerUrl))} ${b.problem}`);
        }
        for (const [param, queue] of [['ingestion_queue', s.ingestionQueue], ['status_queue', s.statusQueue], ['submission_queue', s.submissionQueue]] as const) {
          if (queue !== undefined && !/^[A-Za-z0-9_.:-]+$/.test(queue)) add(`${at}.${param}`, `${at}.${param} ${JSON.stringify(queue)} is not a queue name (letters, digits, . _ - :)`);
        }
        if (s.submissionQueue !== undefined && (s.submissionQueue === s.ingestionQueue || s.submissionQueue === s.statusQueue)) add(`${at}.submission_queue`, `${at}.submission_queue ${s.submissionQueue} is also a queue trawl sends to: submissions would be read back from it`);
      } else if (s.statusQueue !== undefined || s.submissionQueue !== undefined) {
        add(`${at}.${s.statusQueue !== undefined ? 'status_queue' : 'submission_queue'}`, `${at}: a repository sink has no broker; make it type jms to use status_queue or submission_queue`);
      }
    }
    // Every sink's filter (sinks/sink-filter.ts).
    for (const [param, pattern] of [['hub_link_indicator', s.hubLinkIndicator], ['accept_pattern', s.acceptPattern]] as const) {
      if (pattern === undefined) continue;
      const r = makeSafe(pattern);
      if (!r.ok) add(`${at}.${param}`, `${at}.${param} /${pattern}/ is ${r.kind === 'syntax' ? `not a valid regular expression (${r.reason})` : `a pattern trawl cannot run in linear time: ${r.reason}`}`);
    }
  }
  return out;
}

function hasScopeRule(sub: SectionNode): boolean {
  return SCOPE_SECTIONS.some((name) => {
    const s = sub.sections.get(name);
    return s !== undefined && [...s.attribs.values()].some((v) => !Array.isArray(v) || v.length > 0);
  });
}

/**
 * The patterns in a section that are regular expressions, by parameter:
 * `regexp` rules (include/exclude_domains, include/exclude_uris),
 * rewrite_rules (their match part), ecl_override, exclude_headers, and the
 * `regex` rules of trawl_crawl_rules.
 */
function regexPatterns(path: readonly string[], name: string, value: unknown): string[] {
  const texts = Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : typeof value === 'string' ? [value] : [];
  if (name === 'regexp' || name === 'ecl_override' || path[0] === 'exclude_headers') return texts;
  if (name === 'rewrite_rules') {
    return texts.flatMap((t) => {
      const r = parseRewriteRule(t);
      return r.ok ? [r.value.match] : [];
    });
  }
  if (path[0] === 'trawl_crawl_rules' && name === 'rules') {
    return texts.flatMap((t) => {
      const m = /^\s*(?:allow|disallow)\s+regex\s+(.+?)\s*$/i.exec(t);
      return m ? [m[1]!] : [];
    });
  }
  return [];
}

/**
 * `config validate` warns about each configured pattern that a backtracking
 * engine handles badly (core/safe-regex.ts backtrackingRisk: nested
 * quantifiers, overlapping alternation under a quantifier). Such a pattern
 * cannot stall trawl (the linear-time fallback), but every match that hits
 * the slow case costs 50,000 backtracks first, and it may be a mistake.
 */
function checkRegexRisks(c: CollectionConfig, out: Diagnostic[]): void {
  const walk = (s: SectionNode, path: string[], prefix: string): void => {
    for (const [name, value] of s.attribs) {
      for (const pattern of regexPatterns(path, name, value)) {
        const risk = backtrackingRisk(pattern);
        if (risk === undefined) continue;
        const param = [...path, name].join('.');
        const loc = locationOf(c, prefix + param) ?? locationOf(c, prefix + path.join('.')) ?? locationOf(c, '');
        out.push({
          severity: 'warning', code: 'TRAWL_ERR_CONFIG_VALUE', collection: c.name, param,
          message: `the pattern ${JSON.stringify(pattern)} can backtrack badly: ${risk}; trawl runs it safely (linear-time fallback), but each slow match costs time: rewrite it without nested or overlapping repetition`,
          ...(loc ? { location: loc } : {}),
        });
      }
    }
    for (const [name, sub] of s.sections) walk(sub, [...path, name], prefix);
  };
  walk(c.root, [], '');
  for (const [node, tree] of c.nodes) walk(tree, [], `@node:${node}.`);
}
