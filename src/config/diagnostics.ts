/**
 * Configuration diagnostics. The reader and validator never stop at the
 * first problem: they collect every one, each with its code, location and
 * parameter path, so `trawl config validate` can list them all.
 */

import { formatLocation, TrawlError, type ErrorCode, type SourceLocation } from '../core/errors.ts';

export interface Diagnostic {
  readonly severity: 'error' | 'warning';
  readonly code: ErrorCode;
  readonly message: string;
  readonly location?: SourceLocation;
  /** The parameter, as a dotted path from the collection: `storage.datastore`. */
  readonly param?: string;
  /** The collection it belongs to. */
  readonly collection?: string;
}

/** `file:line:col: error TRAWL_ERR_…: [collection] param: message` */
export function formatDiagnostic(d: Diagnostic): string {
  const where = formatLocation(d.location);
  const scope = [d.collection !== undefined ? `collection ${JSON.stringify(d.collection)}` : '', d.param ?? '']
    .filter(Boolean)
    .join(', ');
  return `${where ? `${where}: ` : ''}${d.severity} ${d.code}: ${scope ? `${scope}: ` : ''}${d.message}`;
}

export function hasErrors(ds: readonly Diagnostic[]): boolean {
  return ds.some((d) => d.severity === 'error');
}

/** Turns the first error into an exception, for callers that cannot go on. */
export function throwIfErrors(ds: readonly Diagnostic[]): void {
  const first = ds.find((d) => d.severity === 'error');
  if (!first) return;
  const more = ds.filter((d) => d.severity === 'error').length - 1;
  const message = `${first.param ? `${first.param}: ` : ''}${first.message}${more > 0 ? ` (and ${more} more error${more > 1 ? 's' : ''})` : ''}`;
  throw new TrawlError(first.code, message, first.location ? { location: first.location } : undefined);
}

/** Damerau-free Levenshtein distance, for "did you mean". */
export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length]!;
}

/** The closest candidate within a third of the name's length, if any. */
export function didYouMean(name: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  const limit = Math.max(2, Math.floor(name.length / 3));
  const lower = name.toLowerCase();
  for (const c of candidates) {
    // The distance is at least the difference in length: a name far longer than
    // every candidate (a generated or pasted one) costs no quadratic comparison.
    if (Math.abs(c.length - name.length) > limit) continue;
    const d = editDistance(lower, c.toLowerCase());
    if (d < bestD && d <= limit) {
      best = c;
      bestD = d;
    }
  }
  return best;
}
