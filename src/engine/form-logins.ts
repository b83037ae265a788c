/**
 * HTML form logins (MS-FSCCFG 2.2.4.31–32, `logins` / `<Login>`): made for a
 * cycle when the collection has logins, asked by the site task before it
 * fetches a URI of a site a login covers.
 *
 *   covering(url) ─► the login whose `sites` hold the URL's host (its own `site` when it has no `sites`)
 *   ensure(login) ─► logged in? (ttl not over) ─► yes: fetch
 *                 └► log in: GET preload ─► GET html_form, read its form (autofill)
 *                    ─► GET or POST the fields to scheme://site/form ─► ok | failed (reason)
 *   sessionLost(login, outcome) ─► a redirect to the login form, or a 401/403
 *   relogin(login, generation) ─► log in again, once for every page that saw the same session end
 *
 * A login's requests go through the crawl's own fetcher (egress policy,
 * proxies, the cookie jar), each bounded by login_timeout. A login in
 * progress is shared by every task that waits for it. Parameter values may
 * be `!ENC!` secrets; none of them is ever logged.
 */

import { Parser } from 'htmlparser2';
import type { CollectionSettings } from '../config/registry.ts';
import type { FetchOutcome, FetchRequest, HttpFetcher, ProxySet } from '../fetch/http-fetcher.ts';
import type { CrawlEvents } from './crawl-events.ts';

type LoginSettings = CollectionSettings['logins'][string];

/** A login as the cycle uses it: its settings made into URLs and host sets. */
export interface FormLogin {
  readonly name: string;
  readonly preload: URL | undefined;
  /** scheme://site/form; undefined with autofill and no site or form (the form's own action is used). */
  readonly target: URL | undefined;
  /** action; undefined: the form's method with autofill, else POST. */
  readonly method: 'GET' | 'POST' | undefined;
  readonly htmlForm: URL | undefined;
  readonly autofill: boolean;
  /** parameters, as configured (`!ENC!` values revealed only when sent). */
  readonly parameters: Readonly<Record<string, string>>;
  /** ttl in ms; 0: no timed re-login. */
  readonly ttlMs: number;
  readonly reloginIfFailed: boolean;
  /** The covered hosts: `host` (any port) or `host:port`, lower-case. */
  readonly sites: readonly string[];
}

export type LoginResult = { readonly ok: true; readonly generation: number } | { readonly ok: false; readonly reason: string; readonly generation: number };

interface LoginState {
  /** ok / failed since `at`; none before the first attempt. */
  status: 'none' | 'ok' | 'failed';
  at: number;
  reason: string;
  /** Counts the attempts; a page remembers the one it was fetched under. */
  generation: number;
  pending: Promise<LoginResult> | undefined;
  /** Re-logins a 401/403 set off that did not help (the page still said so): after STATUS_RELOGINS_MAX, a 401/403 is taken as the page's own. */
  uselessStatusRelogins: number;
}

/** Re-logins for a 401/403 that did not help before such statuses stop counting as a lost session. */
const STATUS_RELOGINS_MAX = 3;
/** Body bytes read from a login page (preload, html_form, the answer to the form). */
const LOGIN_PAGE_MAX_BYTES = 2 * 1024 * 1024;

export interface FormLoginsParts {
  readonly fetcher: Pick<HttpFetcher, 'fetch'>;
  readonly events: CrawlEvents;
  readonly now: () => number;
  /** login_timeout in ms: each request of a login. */
  readonly timeoutMs: number;
  readonly connectTimeoutMs: number;
  /** The collection's request headers (User-Agent …). */
  readonly headers: Readonly<Record<string, string>>;
  /** `!ENC!` values decrypted (revealSecret with the key file). */
  readonly reveal: (value: string) => string;
  /** The proxies of a URL, when the collection names any. */
  readonly proxyFor?: ((url: URL) => ProxySet | undefined) | undefined;
  readonly signal: AbortSignal;
}

/** The collection's logins as the cycle uses them; problems the validator reports already are skipped here. */
export function formLoginsOf(logins: Readonly<Record<string, LoginSettings>>): FormLogin[] {
  const out: FormLogin[] = [];
  for (const [name, l] of Object.entries(logins)) {
    const scheme = (l.scheme ?? 'http').trim().toLowerCase();
    const site = l.site?.trim();
    const form = l.form?.trim();
    let target: URL | undefined;
    if (site !== undefined && site !== '' && form !== undefined && form !== '') target = parseUrl(`${scheme}://${site}${form.startsWith('/') ? '' : '/'}${form}`);
    const action = l.action?.trim().toUpperCase();
    const sites = (l.sites ?? []).map((s) => s.trim().toLowerCase()).filter((s) => s !== '');
    if (sites.length === 0 && site) sites.push(site.toLowerCase());
    out.push({
      name,
      preload: l.preload ? parseUrl(l.preload.trim()) : undefined,
      target,
      method: action === 'GET' || action === 'POST' ? action : undefined,
      htmlForm: l.htmlForm ? parseUrl(l.htmlForm.trim()) : undefined,
      autofill: l.autofill === true,
      parameters: l.parameters ?? {},
      ttlMs: (l.ttlS ?? 0) * 1000,
      reloginIfFailed: l.reloginIfFailed === true,
      sites,
    });
  }
  return out;
}

/** Every host the logins cover or send requests to, as `host` and `host:port` (the cookie jar keeps their cookies when use_cookies is off). */
export function loginHosts(logins: readonly FormLogin[]): Set<string> {
  const out = new Set<string>();
  for (const l of logins) {
    for (const h of l.sites) out.add(h);
    for (const u of [l.preload, l.target, l.htmlForm]) if (u) out.add(u.host.toLowerCase()).add(u.hostname.toLowerCase());
  }
  return out;
}

/** The first login whose sites hold the URL's host, as `trawl urltest --explain` names it (never a parameter's value). */
export function describeLogin(logins: readonly FormLogin[], url: URL): string | undefined {
  const host = url.host.toLowerCase();
  const l = logins.find((x) => x.sites.includes(host) || x.sites.includes(url.hostname.toLowerCase()));
  if (!l) return undefined;
  const to = l.target ? `${l.method ?? (l.autofill ? 'the form\'s method' : 'POST')} ${l.target.href}` : `the form of ${l.htmlForm?.href ?? '?'}`;
  return `${l.name} (form login: ${to}${l.autofill ? ', autofill' : ''}${l.ttlMs > 0 ? `, ttl ${l.ttlMs / 1000} s` : ''})`;
}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** origin + path, the form a login page's URL is compared in. */
const pageKey = (u: URL): string => `${u.origin}${u.pathname}`;

export class FormLogins {
  private readonly p: FormLoginsParts;
  /** Covered host (or host:port) → its login; the first login that names a host covers it. */
  private readonly byHost = new Map<string, FormLogin>();
  private readonly states = new Map<FormLogin, LoginState>();
  /** The pages a session's end sends a crawler to: every login's form and html_form. */
  private readonly loginPages = new Map<FormLogin, Set<string>>();

  constructor(logins: readonly FormLogin[], p: FormLoginsParts) {
    this.p = p;
    for (const l of logins) {
      for (const h of l.sites) if (!this.byHost.has(h)) this.byHost.set(h, l);
      this.states.set(l, { status: 'none', at: 0, reason: '', generation: 0, pending: undefined, uselessStatusRelogins: 0 });
      const pages = new Set<string>();
      if (l.target) pages.add(pageKey(l.target));
      if (l.htmlForm) pages.add(pageKey(l.htmlForm));
      this.loginPages.set(l, pages);
    }
  }

  /** The login that covers this URL's host, if any. */
  covering(url: URL): FormLogin | undefined {
    return this.byHost.get(url.host) ?? this.byHost.get(url.hostname);
  }

  /** Logged in (now, or once the login under way ends), or why not; logs in when the session is none, over (ttl) or may be tried again (relogin_if_failed). */
  ensure(login: FormLogin): Promise<LoginResult> {
    const st = this.states.get(login)!;
    if (st.pending) return st.pending;
    const now = this.p.now();
    const over = login.ttlMs > 0 && now - st.at >= login.ttlMs;
    if (st.status === 'ok' && !over) return Promise.resolve({ ok: true, generation: st.generation });
    if (st.status === 'failed' && !(login.reloginIfFailed && over)) return Promise.resolve({ ok: false, reason: st.reason, generation: st.generation });
    return this.attempt(login, st, st.status === 'none' ? 'first login' : st.status === 'ok' ? `ttl ${login.ttlMs / 1000} s over` : `relogin_if_failed after ttl ${login.ttlMs / 1000} s`);
  }

  /**
   * A page fetched under `generation` showed the session was lost: logs in
   * again, unless a login since then already did (or one is under way).
   * A failed login is not tried again here (ensure() says when it is).
   */
  relogin(login: FormLogin, generation: number, why: string): Promise<LoginResult> {
    const st = this.states.get(login)!;
    if (st.pending) return st.pending;
    if (st.generation > generation) return Promise.resolve(st.status === 'ok' ? { ok: true, generation: st.generation } : { ok: false, reason: st.reason, generation: st.generation });
    if (st.status === 'failed') return Promise.resolve({ ok: false, reason: st.reason, generation: st.generation });
    return this.attempt(login, st, why);
  }

  /** Why a covered page shows that the session was lost (a redirect to the login form or html_form, a 401 or 403), or undefined. */
  sessionLost(login: FormLogin, url: URL, o: FetchOutcome): string | undefined {
    if (o.kind !== 'response') return undefined;
    if (o.status >= 300 && o.status < 400) {
      const to = o.headers.location !== undefined ? parseUrl(resolveLocation(o.headers.location, url)) : undefined;
      if (to && this.loginPages.get(login)!.has(pageKey(to)) && !this.loginPages.get(login)!.has(pageKey(url))) return `${url.href} redirected to the login page`;
      return undefined;
    }
    if ((o.status === 401 || o.status === 403) && this.states.get(login)!.uselessStatusRelogins < STATUS_RELOGINS_MAX) return `${url.href} answered ${o.status}`;
    return undefined;
  }

  /** A re-login set off by a 401/403 did not help: the page still answered so. */
  statusReloginUseless(login: FormLogin): void {
    const st = this.states.get(login)!;
    if (++st.uselessStatusRelogins === STATUS_RELOGINS_MAX) {
      this.p.events.emit({ type: 'login', message: `login ${login.name}: ${STATUS_RELOGINS_MAX} re-logins for a 401 or 403 did not help; from now on a 401 or 403 is taken as the page's own answer, and only a redirect to the login page as a lost session` });
    }
  }

  private attempt(login: FormLogin, st: LoginState, why: string): Promise<LoginResult> {
    st.generation++;
    const generation = st.generation;
    const run = async (): Promise<LoginResult> => {
      let reason: string | undefined;
      try {
        reason = await this.logIn(login);
      } catch (err) {
        reason = (err as Error).message;
      }
      st.at = this.p.now();
      st.pending = undefined;
      if (this.p.signal.aborted) {
        // Stopped while logging in: neither a success nor a failure to remember.
        st.status = 'none';
        return { ok: false, reason: `login ${login.name} not finished: the crawl is stopping`, generation };
      }
      if (reason === undefined) {
        st.status = 'ok';
        st.reason = '';
        this.p.events.emit({ type: 'login', url: login.target?.href, message: `login ${login.name}: ok (${why})` });
        return { ok: true, generation };
      }
      st.status = 'failed';
      st.reason = `login ${login.name} failed: ${reason}`;
      const retry = login.reloginIfFailed && login.ttlMs > 0 ? `; tried again after ttl ${login.ttlMs / 1000} s (relogin_if_failed)` : '';
      this.p.events.emit({ type: 'login', url: login.target?.href, code: 'lf', message: `${st.reason} (${why})${retry}` });
      return { ok: false, reason: st.reason, generation };
    };
    st.pending = run();
    return st.pending;
  }

  /** One login: undefined when it succeeded, else why it failed (never a parameter's value). */
  private async logIn(login: FormLogin): Promise<string | undefined> {
    if (login.preload) {
      const o = await this.get(login.preload);
      if (o.kind === 'failure') return `preload ${login.preload.href}: ${this.why(o)}`;
      if (o.status >= 400) return `preload ${login.preload.href} answered ${o.status}`;
    }
    let fields: Array<[string, string]> = [];
    let target = login.target;
    let method = login.method;
    if (login.autofill && login.htmlForm) {
      const o = await this.get(login.htmlForm);
      if (o.kind === 'failure') return `html_form ${login.htmlForm.href}: ${this.why(o)}`;
      if (o.status < 200 || o.status >= 300) return `html_form ${login.htmlForm.href} answered ${o.status}`;
      const forms = readForms(new TextDecoder().decode(o.body), login.htmlForm);
      const form = (target && forms.find((f) => f.action !== undefined && pageKey(f.action) === pageKey(target!))) ?? forms.find((f) => f.hasPassword) ?? forms[0];
      if (!form) return `html_form ${login.htmlForm.href} holds no form`;
      fields = form.fields;
      target ??= form.action;
      method ??= form.method;
    }
    if (!target) return 'no form to submit to (set site and form, or autofill with html_form)';
    method ??= 'POST';
    // MS-FSCCFG 2.2.4.32: a configured value overrides the form's.
    for (const [name, value] of Object.entries(login.parameters)) {
      const v = this.p.reveal(value.trim());
      const at = fields.findIndex(([n]) => n === name);
      if (at >= 0) fields[at] = [name, v];
      else fields.push([name, v]);
    }
    const body = new URLSearchParams(fields).toString();
    let url = target;
    if (method === 'GET') {
      url = new URL(target.href);
      url.search = url.search ? `${url.search}&${body}` : body;
    }
    const o = await this.p.fetcher.fetch(this.request(url, method === 'POST' ? body : undefined));
    const where = `${method} ${target.href}`;
    if (o.kind === 'failure') return `${where}: ${this.why(o)}`;
    if (o.status >= 400) return `${where} answered ${o.status}`;
    if (o.status >= 300) {
      const to = o.headers.location !== undefined ? parseUrl(resolveLocation(o.headers.location, url)) : undefined;
      if (to && this.loginPages.get(login)!.has(pageKey(to))) return `${where} redirected back to the login form (${to.origin}${to.pathname}): the parameters were refused`;
      return undefined;
    }
    if (o.status >= 200 && readForms(new TextDecoder().decode(o.body), url).some((f) => f.hasPassword)) return `${where} answered ${o.status} with the login form again: the parameters were refused`;
    return undefined;
  }

  /** A failed request's reason; a timeout is login_timeout's. */
  private why(o: FetchOutcome & { kind: 'failure' }): string {
    return o.code === 'ti' ? `no answer within login_timeout (${this.p.timeoutMs / 1000} s)` : o.reason;
  }

  private get(url: URL): Promise<FetchOutcome> {
    return this.p.fetcher.fetch(this.request(url, undefined));
  }

  private request(url: URL, postBody: string | undefined): FetchRequest {
    const proxy = this.p.proxyFor?.(url);
    return {
      url, headers: this.p.headers, acceptCompression: true, http10: false,
      ...(postBody !== undefined ? { postBody } : {}),
      ...(proxy ? { proxy } : {}),
      limits: {
        fetchTimeoutMs: this.p.timeoutMs, connectTimeoutMs: Math.min(this.p.connectTimeoutMs, this.p.timeoutMs),
        cutOffBytes: LOGIN_PAGE_MAX_BYTES, truncate: true, maxDecompressedBytes: LOGIN_PAGE_MAX_BYTES, maxDocumentBytes: LOGIN_PAGE_MAX_BYTES,
      },
      signal: this.p.signal,
    };
  }
}

function resolveLocation(location: string, base: URL): string {
  try {
    return new URL(location, base).href;
  } catch {
    return '';
  }
}

/** A form of a page: where it goes, how, the values it would send as it stands, and whether it asks for a password. */
export interface HtmlForm {
  readonly action: URL | undefined;
  readonly method: 'GET' | 'POST';
  readonly fields: Array<[string, string]>;
  readonly hasPassword: boolean;
}

/**
 * The forms of an HTML page, each with the values a browser would submit
 * untouched: named inputs (hidden, text, password …; checkboxes and radios
 * when checked; not buttons, files or images), each select's selected (else
 * first) option, textareas.
 */
export function readForms(html: string, base: URL): HtmlForm[] {
  const forms: Array<{ action: URL | undefined; method: 'GET' | 'POST'; fields: Array<[string, string]>; hasPassword: boolean }> = [];
  let form: (typeof forms)[number] | undefined;
  let select: { name: string; first: string | undefined; chosen: string | undefined } | undefined;
  let option: { value: string | undefined; text: string; selected: boolean } | undefined;
  let textarea: { name: string; text: string } | undefined;
  const parser = new Parser({
    onopentag(name, a) {
      switch (name) {
        case 'form':
          form = { action: a.action !== undefined && a.action.trim() !== '' ? parseUrl(resolveLocation(a.action.trim(), base)) : new URL(base.href), method: a.method?.trim().toLowerCase() === 'post' ? 'POST' : 'GET', fields: [], hasPassword: false };
          forms.push(form);
          break;
        case 'input': {
          const type = (a.type ?? 'text').trim().toLowerCase();
          if (type === 'password') {
            if (form) form.hasPassword = true;
            else forms.push({ action: undefined, method: 'GET', fields: [], hasPassword: true });
          }
          if (!form || a.name === undefined || a.name === '' || a.disabled !== undefined) break;
          if (type === 'submit' || type === 'button' || type === 'reset' || type === 'image' || type === 'file') break;
          if ((type === 'checkbox' || type === 'radio') && a.checked === undefined) break;
          form.fields.push([a.name, a.value ?? (type === 'checkbox' || type === 'radio' ? 'on' : '')]);
          break;
        }
        case 'select':
          if (form && a.name !== undefined && a.name !== '' && a.disabled === undefined) select = { name: a.name, first: undefined, chosen: undefined };
          break;
        case 'option':
          if (select) option = { value: a.value, text: '', selected: a.selected !== undefined };
          break;
        case 'textarea':
          if (form && a.name !== undefined && a.name !== '' && a.disabled === undefined) textarea = { name: a.name, text: '' };
          break;
      }
    },
    ontext(text) {
      if (option) option.text += text;
      if (textarea) textarea.text += text;
    },
    onclosetag(name) {
      if (name === 'option' && select && option) {
        const v = option.value ?? option.text.trim();
        select.first ??= v;
        if (option.selected) select.chosen = v;
        option = undefined;
      } else if (name === 'select' && select) {
        const v = select.chosen ?? select.first;
        if (form && v !== undefined) form.fields.push([select.name, v]);
        select = undefined;
      } else if (name === 'textarea' && textarea) {
        form?.fields.push([textarea.name, textarea.text]);
        textarea = undefined;
      } else if (name === 'form') {
        form = undefined;
      }
    },
  }, { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true });
  parser.write(html);
  parser.end();
  return forms;
}
