/**
 * `trawl codes`: every URI and document skip code (MS-FSCADM 2.2.3.1,
 * 2.2.3.2) with its meaning and what to do, and every error code with its
 * exit status. The text comes from the two registries (core/skip-codes.ts,
 * core/errors.ts), so it cannot drift from what trawl prints.
 */

import type { Command } from 'commander';
import { ERROR_CODES } from '../core/errors.ts';
import { DOC_SKIP_ACTIONS, DOC_SKIP_CODES, URI_SKIP_ACTIONS, URI_SKIP_CODES, type DocSkipCode, type UriSkipCode } from '../core/skip-codes.ts';
import type { Io } from './io.ts';

/** One row of `trawl codes --json`. */
export interface CodeRow {
  readonly kind: 'uri-skip' | 'document-skip' | 'error';
  readonly code: string;
  readonly meaning: string;
  /** What to do (skip codes); the exit status (error codes). */
  readonly action?: string;
  readonly exitCode?: number;
}

export function codeRows(): CodeRow[] {
  return [
    ...(Object.keys(URI_SKIP_CODES) as UriSkipCode[]).map((code) => ({ kind: 'uri-skip' as const, code, meaning: URI_SKIP_CODES[code], action: URI_SKIP_ACTIONS[code] })),
    ...(Object.keys(DOC_SKIP_CODES) as DocSkipCode[]).map((code) => ({ kind: 'document-skip' as const, code, meaning: DOC_SKIP_CODES[code], action: DOC_SKIP_ACTIONS[code] })),
    ...Object.entries(ERROR_CODES).map(([code, spec]) => ({ kind: 'error' as const, code, meaning: spec.summary, exitCode: spec.exitCode })),
  ];
}

function text(rows: readonly CodeRow[]): string {
  const out: string[] = [];
  const section = (title: string, kind: CodeRow['kind']): void => {
    const of = rows.filter((x) => x.kind === kind);
    if (of.length === 0) return;
    out.push(`${out.length ? '\n' : ''}${title}`);
    for (const r of of) {
      out.push(kind === 'error' ? `  ${r.code} (exit ${r.exitCode}): ${r.meaning}` : `  ${r.code}  ${r.meaning}\n      what to do: ${r.action}`);
    }
  };
  section('URI skip codes (MS-FSCADM 2.2.3.1): URIs not queued', 'uri-skip');
  section('Document skip codes (MS-FSCADM 2.2.3.2): documents fetched or tried, and not stored', 'document-skip');
  section('Error codes: what a command that fails prints, and its exit status', 'error');
  return out.join('\n');
}

export function registerCodesCommand(program: Command, io: Io, setExit: (code: number) => void): void {
  program
    .command('codes')
    .description('list the skip codes (with their meaning and what to do) and the error codes (with their exit status)')
    .argument('[codes...]', 'only these codes')
    .option('--json', 'one JSON object a line')
    .action((only: string[], opts: { json?: boolean }) => {
      const want = new Set(only.map((c) => c.toLowerCase()));
      const rows = codeRows().filter((r) => want.size === 0 || want.has(r.code.toLowerCase()));
      const unknown = [...want].filter((c) => !rows.some((r) => r.code.toLowerCase() === c));
      for (const c of unknown) io.err(`trawl: no such code: ${c}`);
      if (opts.json) for (const r of rows) io.out(JSON.stringify(r));
      else if (rows.length) io.out(text(rows));
      setExit(unknown.length ? 1 : 0);
    });
}
