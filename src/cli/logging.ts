/**
 * The options every trawl logger is made with (`trawl crawl`'s crawl log,
 * `trawl serve`'s JSON log): secrets masked before a line is written.
 *
 *   log.info(fields, message) ─► logMethod hook ─► maskFields(fields), maskText(message) ─► pino
 *
 * What is secret is `config/secrets.ts`'s one list: a field named like a
 * secret header (authorization, cookie, token, password, …) is masked whole;
 * URL fields lose the password of their userinfo; any other string, and the
 * message and error texts, go through `maskText`. Objects are copied only
 * when something in them changes, so a crawl's event lines (no secrets in
 * them almost always) cost a few string scans each.
 */

import pino, { type Logger, type LoggerOptions } from 'pino';
import { LogFile, isoTimeEachMs } from '../core/log-file.ts';
import type { EventLog } from '../service/crawl-log.ts';
import { isSecretHeader, MASK, maskText, maskUrl } from '../config/secrets.ts';

/** Nesting followed into logged objects; deeper values are logged as they are. */
const MAX_DEPTH = 4;

function maskError(err: Error): Record<string, unknown> {
  return {
    type: err.name,
    message: maskText(err.message),
    ...(err.stack !== undefined ? { stack: maskText(err.stack) } : {}),
    ...((err as { code?: unknown }).code !== undefined ? { code: (err as { code?: unknown }).code } : {}),
  };
}

/** `value` with its secrets masked; the same object when nothing needed masking. */
export function maskFields(value: unknown, key = '', depth = 0): unknown {
  if (typeof value === 'string') {
    if (key !== '' && isSecretHeader(key)) return value === '' ? value : MASK;
    if (key === 'url' || key === 'uri' || key === 'href') return maskUrl(value);
    return maskText(value);
  }
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH) return value;
  if (value instanceof Error) return maskError(value);
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((v: unknown) => {
      const m = maskFields(v, key, depth + 1);
      changed ||= m !== v;
      return m;
    });
    return changed ? out : value;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(value)) {
    const m = maskFields(v, k, depth + 1);
    if (m !== v) {
      out ??= { ...(value as Record<string, unknown>) };
      out[k] = m;
    }
  }
  return out ?? value;
}

/** pino options that mask secrets in every line (merge them into the logger's own). */
export function maskingLogOptions(): Pick<LoggerOptions, 'hooks'> {
  return {
    hooks: {
      logMethod(this: unknown, args: unknown[], method: (...a: unknown[]) => void): void {
        // pino's forms: (message, ...format args), (fields, message?, ...), (error, message?, ...)
        const masked = args.map((a, i) => (i === 0 && a instanceof Error ? { err: maskError(a) } : maskFields(a)));
        // log.error(err) alone takes its message from the error: keep that, masked.
        if (args.length === 1 && args[0] instanceof Error) masked.push(maskText(args[0].message));
        method.apply(this, masked);
      },
    },
  };
}

/**
 * An event log of its own for one collection (`trawl serve`): the same
 * lines `trawl crawl` writes to logs/crawl.log (the event, URL, HTTP
 * status, skip code and message, the collection's name bound once),
 * through a LogFile at `path`.
 */
/** One crawl event as a line of an event log (the one format `trawl crawl` and `trawl serve` write, and crawl-log.ts reads). */
export function logEvent(events: Logger, e: Parameters<EventLog['write']>[0]): void {
  // trawl_elastic.events: the Elastic crawler's record (event.action, ECS fields) instead of trawl's;
  // `event` and `url` stay, for trawl's own readers of the log (CollectionGetLog, crawl-log.ts).
  if (e.ecs !== undefined) events[e.type === 'disk' ? 'warn' : 'info']({ ...e.ecs, event: e.type, url: e.url });
  else events[e.type === 'disk' ? 'warn' : 'info']({ event: e.type, url: e.url, status: e.status, code: e.code }, e.message);
}

export function openEventLog(path: string, collection: string): EventLog {
  const file = new LogFile(path);
  const events = pino({ base: undefined, timestamp: isoTimeEachMs(), ...maskingLogOptions() }, file).child({ collection });
  return {
    path,
    write: (e) => logEvent(events, e),
    flush: () => new Promise<void>((resolve) => file.flush(resolve)),
    close: () => file.close(),
  };
}
