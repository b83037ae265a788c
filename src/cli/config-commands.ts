/**
 * `trawl config …`: validate, show, convert, encrypt, keygen.
 */

import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve as resolvePath } from 'node:path';
import type { Command } from 'commander';
import { TrawlError, trawlError } from '../core/errors.ts';
import { formatDiagnostic, hasErrors, type Diagnostic } from '../config/diagnostics.ts';
import { effectiveTree, resolveSettings } from '../config/effective.ts';
import { clientCertDiagnostics } from '../config/client-cert.ts';
import { configWarnings } from '../config/honoured.ts';
import { readConfigFile } from '../config/load.ts';
import type { CollectionConfig } from '../config/model.ts';
import { encryptSecret, generateKeyBytes, keyFilePath, loadKeyFile, redactCollection } from '../config/secrets.ts';
import { writeConfigXml, type WriteMode } from '../config/writer.ts';
import type { Io } from './io.ts';
import { addUrlOptions, checkedUrls, collectionForUrls, SETTINGS_RULE_HELP, urlCrawlOptions, type UrlOptionValues } from './url-collection.ts';

const CONFIG_EXIT = 65;

function printDiagnostics(io: Io, ds: readonly Diagnostic[], strict: boolean): void {
  for (const d of ds) io.err(formatDiagnostic(strict && d.severity === 'warning' ? { ...d, severity: 'error' } : d));
}

function pickCollection(collections: CollectionConfig[], name: string | undefined, file: string): CollectionConfig {
  if (name === undefined) {
    if (collections.length === 1) return collections[0]!;
    throw new TrawlError('TRAWL_ERR_USAGE', `${file} defines ${collections.length} collections (${collections.map((c) => c.name).join(', ')}); choose one with --collection`);
  }
  const c = collections.find((x) => x.name === name);
  if (!c) throw new TrawlError('TRAWL_ERR_CONFIG_NOT_FOUND', `${file} has no collection ${JSON.stringify(name)} (it has: ${collections.map((x) => x.name).join(', ') || 'none'})`);
  return c;
}

/** Reads a file and stops with its diagnostics when it has errors. */
function loadOrFail(io: Io, file: string): CollectionConfig[] {
  const r = readConfigFile(file);
  if (hasErrors(r.diagnostics)) {
    printDiagnostics(io, r.diagnostics, false);
    throw new TrawlError(r.diagnostics.find((d) => d.severity === 'error')!.code, `${file} is not a valid configuration (${r.diagnostics.filter((d) => d.severity === 'error').length} errors above)`);
  }
  printDiagnostics(io, r.diagnostics, false);
  return r.document.collections;
}

export function registerConfigCommands(program: Command, io: Io, setExit: (code: number) => void): void {
  const config = program.command('config').description('read, check, print and convert collection configurations');

  config
    .command('validate')
    .description('check configuration files (MS-FSCCFG XML or Elastic crawler YAML); lists every error found')
    .argument('<files...>', 'configuration files')
    .option('--strict', 'treat warnings as errors')
    .option('--json', 'print the diagnostics as JSON')
    .action((files: string[], opts: { strict?: boolean; json?: boolean }) => {
      let failed = false;
      const all: Record<string, unknown>[] = [];
      for (const file of files) {
        const read = readConfigFile(file);
        // A file that reads without errors is also checked for what this version ignores,
        // and for the files it names that must be read before a crawl (the client certificate).
        const baseDir = dirname(resolvePath(file));
        const r = hasErrors(read.diagnostics) ? read : {
          ...read,
          diagnostics: [...read.diagnostics, ...read.document.collections.flatMap((c) => [...clientCertDiagnostics(c, baseDir), ...configWarnings(c)])],
        };
        const bad = hasErrors(r.diagnostics) || (opts.strict === true && r.diagnostics.length > 0);
        failed ||= bad;
        if (opts.json) {
          all.push({ file, valid: !bad, collections: r.document.collections.map((c) => c.name), diagnostics: r.diagnostics });
          continue;
        }
        printDiagnostics(io, r.diagnostics, opts.strict === true);
        const errors = r.diagnostics.filter((d) => d.severity === 'error' || opts.strict === true).length;
        const warnings = r.diagnostics.length - errors;
        io.out(
          bad
            ? `${file}: INVALID (${errors} error${errors === 1 ? '' : 's'}${warnings ? `, ${warnings} warning${warnings === 1 ? '' : 's'}` : ''})`
            : `${file}: OK (${r.document.collections.length} collection${r.document.collections.length === 1 ? '' : 's'}: ${r.document.collections.map((c) => c.name).join(', ')}${warnings ? `; ${warnings} warning${warnings === 1 ? '' : 's'}` : ''})`,
        );
      }
      if (opts.json) io.out(JSON.stringify(all, null, 2));
      setExit(failed ? CONFIG_EXIT : 0);
    });

  const show = config
    .command('show')
    .description('print the effective configuration of a collection, with defaults applied and secrets redacted; --url: of the collection `trawl crawl URL` builds')
    .argument('[file]', 'configuration file (or give --url instead)')
    .option('--url <url>', 'instead of a file: the collection `trawl crawl URL` crawls (repeat for several URLs), with its one-shot defaults', (v: string, prev: string[] = []) => [...prev, v])
    .option('--collection <name>', 'the collection (needed when the file has several)')
    .option('--node <name>', 'apply the <Node> override of this node scheduler')
    .option('--subcollection <name>', 'with --format json: the settings of this sub-collection')
    .option('--format <format>', 'xml or json', 'xml')
    .option('--mode <mode>', 'xml only: complete (defaults included), explicit (as written) or changed (non-default values)', 'complete');
  addUrlOptions(show, 'with --url')
    .addHelpText('after', SETTINGS_RULE_HELP)
    .action((file: string | undefined, opts: { url?: string[]; collection?: string; node?: string; subcollection?: string; format: string; mode: string } & UrlOptionValues) => {
      if (!['xml', 'json'].includes(opts.format)) throw new TrawlError('TRAWL_ERR_USAGE', `--format must be xml or json, not ${JSON.stringify(opts.format)}`);
      if (!['complete', 'explicit', 'changed'].includes(opts.mode)) throw new TrawlError('TRAWL_ERR_USAGE', `--mode must be complete, explicit or changed, not ${JSON.stringify(opts.mode)}`);
      if ((file === undefined) === (opts.url === undefined)) throw trawlError('SHOW_FILE_OR_URL', {});
      const oneShot = urlCrawlOptions(opts, opts.url !== undefined, '--url');
      const picked = opts.url !== undefined ? collectionForUrls(checkedUrls(opts.url), oneShot) : pickCollection(loadOrFail(io, file!), opts.collection, file!);
      if (opts.node !== undefined && !picked.nodes.has(opts.node)) {
        io.err(`trawl: note: collection ${JSON.stringify(picked.name)} has no <Node name="${opts.node}">; the collection's own values apply`);
      }
      const c = redactCollection(picked);
      if (opts.format === 'json') {
        const settings = resolveSettings(c, {
          ...(opts.node !== undefined ? { node: opts.node } : {}),
          ...(opts.subcollection !== undefined ? { subcollection: opts.subcollection } : {}),
        });
        io.out(JSON.stringify({ collection: c.name, ...(opts.node ? { node: opts.node } : {}), ...(opts.subcollection ? { subcollection: opts.subcollection } : {}), settings }, null, 2));
        return;
      }
      // With --node, the node's override is folded into the collection.
      const shown: CollectionConfig = opts.node !== undefined ? { name: c.name, root: effectiveTree(c, opts.node), nodes: new Map() } : c;
      io.out(writeConfigXml(shown, { mode: opts.mode as WriteMode }).trimEnd());
    });

  config
    .command('convert')
    .description('convert a configuration (e.g. Elastic crawler YAML) to MS-FSCCFG XML')
    .argument('<file>', 'configuration file')
    .requiredOption('--to <format>', 'target format: xml')
    .option('-o, --out <file>', 'write to this file instead of standard output')
    .action((file: string, opts: { to: string; out?: string }) => {
      if (opts.to !== 'xml') throw new TrawlError('TRAWL_ERR_USAGE', `--to must be xml, not ${JSON.stringify(opts.to)}`);
      const xml = writeConfigXml({ collections: loadOrFail(io, file) });
      if (opts.out !== undefined) {
        // The converted configuration keeps its secrets: a file for its owner only.
        writeFileSync(opts.out, xml, { mode: 0o600 });
        io.err(`trawl: wrote ${opts.out}`);
      } else io.out(xml.trimEnd());
    });

  const keyOptions = (cmd: Command): Command =>
    cmd
      .option('--key-file <file>', 'the key file (default: $TRAWL_KEY_FILE, else CrawlerEncryptionKey.dat in the data directory)')
      .option('--data <dir>', 'the data directory', './trawl-data');

  keyOptions(
    config
      .command('keygen')
      .description('create a key file for !ENC! secrets: a random 128-bit key and 128-bit IV')
      .option('--force', 'overwrite an existing key file (secrets encrypted with it can no longer be read)'),
  ).action((opts: { keyFile?: string; data: string; force?: boolean }) => {
    const path = opts.keyFile ?? keyFilePath(opts.data);
    if (existsSync(path) && !opts.force) throw new TrawlError('TRAWL_ERR_USAGE', `${path} exists; pass --force to replace it (values encrypted with it will no longer decrypt)`);
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(path, generateKeyBytes(), { mode: 0o600 });
    chmodSync(path, 0o600); // a replaced file keeps its old mode otherwise
    io.out(`wrote ${path}`);
  });

  keyOptions(
    config
      .command('encrypt')
      .description('encrypt a password read from standard input into an !ENC! value for passwd, proxy or sinks'),
  ).action(async (opts: { keyFile?: string; data: string }) => {
    const key = loadKeyFile(opts.keyFile ?? keyFilePath(opts.data));
    const secret = (await io.readStdin()).replace(/\r?\n$/, '');
    if (secret === '') throw new TrawlError('TRAWL_ERR_USAGE', 'no secret on standard input; use e.g.  printf %s "$PASSWORD" | trawl config encrypt');
    io.out(encryptSecret(secret, key));
  });
}

