/**
 * Politeness and site rotation, in memory, for one collection.
 *
 *   waiting sites (FIFO) ──(max_sites)──► active sites ──► ready? ──► start a fetch
 *                                          │  per site: inFlight < max_pending,
 *                                          │            committing < COMMIT_BACKLOG × max_pending
 *                                          │            now ≥ pausedUntil (Retry-After, backoff)
 *                                          │  per gate: now ≥ gate.nextStart
 *                                          ▼
 *          gate = the site itself, or its IP address when enforce_delay_per_ip
 *
 * The rule (written down, as the design asks): two requests to one gate
 * START at least `delay` apart, and a site never has more than
 * `max_pending` requests outstanding. A slow response therefore lets a
 * second request start once `delay` has passed, up to max_pending at once.
 * robots.txt requests go through the same gate.
 *
 * A site leaves the active set when it has no work left, or after
 * `max_inter_docs` documents, when it goes to the back of the waiting line
 * so that other sites get a turn.
 */

export interface SitePolicy {
  /** Delay between request starts, in ms, before backoff (delay, variable_delay, Crawl-delay). */
  delayMs(site: SiteState): number;
  readonly maxPending: number;
  readonly maxSites: number;
  /** max_inter_docs; undefined = no rotation. */
  readonly maxInterDocs: number | undefined;
  readonly maxBackoffDelayMs: number;
}

export interface Gate {
  /** No request may start before this (the last start plus its delay, or a backoff). */
  nextStartMs: number;
  /** When the last request through the gate started (or was sent). */
  lastStartMs: number;
}

/** Sums over every site of a scheduler, kept as each site changes, so that no reader walks every site (bench/README.md, *Memory per site*, 4c296a7). */
export interface SiteTally {
  queued: number;
  buffered: number;
}

/**
 * A site's request ends when its response is in (max_pending counts
 * outstanding requests, MS-FSCCFG 2.2.3), but its document is committed
 * tens of ms later, after the stores' group commits. Up to this many times
 * max_pending documents per site may wait for that; the site's next
 * request waits beyond it. A kill -9 loses what waits (it is fetched
 * again), so this also bounds what a crash refetches from one site.
 */
export const COMMIT_BACKLOG = 8;

export class SiteState {
  readonly site: string;
  private readonly tally: SiteTally;
  private queuedN = 0;
  /** Leased URIs not yet started (changed through hold, next, putBack and drain, which keep the tally). */
  private readonly leased: unknown[] = [];
  inFlight = 0;
  /** Documents fetched and not yet committed: at most COMMIT_BACKLOG × max_pending. */
  committing = 0;
  /** Documents fetched in this cycle (max_doc). */
  fetched = 0;
  /** Documents since the site became active (max_inter_docs). */
  sinceActive = 0;
  /** Consecutive connection failures (max_backoff_counter). */
  failures = 0;
  pausedUntilMs = 0;
  gate: Gate;
  /** Set when the site is done for this cycle (max_doc, backoff counter, robots). */
  closed = false;
  active = false;
  /** In the waiting line (kept on the site: a search of the line was O(sites) per queued URI). */
  waiting = false;
  /** A lease or robots fetch is being prepared for this site. */
  busy = false;
  /** The sub-collection of the request being started (its delay applies). */
  sub: string | undefined;
  /** Set when the next URI needs a longer delay than the gate allows for (a sub-collection's). */
  notBeforeMs = 0;
  /** The Crawl-delay of the site's robots.txt, in ms (0: none, or not known yet). */
  crawlDelayMs = 0;

  constructor(site: string, gate: Gate, tally: SiteTally = { queued: 0, buffered: 0 }) {
    this.site = site;
    this.gate = gate;
    this.tally = tally;
  }

  private hostname: string | undefined;

  /** The site's host name, as URL.hostname gives it (parsed once: every task on the site asks). */
  get host(): string {
    return (this.hostname ??= new URL(this.site).hostname);
  }

  /** URIs queued in the store (known from enqueue results). */
  get queued(): number {
    return this.queuedN;
  }

  set queued(n: number) {
    this.tally.queued += n - this.queuedN;
    this.queuedN = n;
  }

  get buffer(): readonly unknown[] {
    return this.leased;
  }

  /** Keeps leased URIs until they are started, in order. */
  hold(items: readonly unknown[]): void {
    this.leased.push(...items);
    this.tally.buffered += items.length;
  }

  /** The next leased URI to start, if any. */
  next(): unknown {
    if (this.leased.length === 0) return undefined;
    this.tally.buffered--;
    return this.leased.shift();
  }

  /** Puts a URI back in front: it is started next. */
  putBack(item: unknown): void {
    this.leased.unshift(item);
    this.tally.buffered++;
  }

  /** Takes every leased URI not yet started (to release them). */
  drain(): unknown[] {
    const all = this.leased.splice(0);
    this.tally.buffered -= all.length;
    return all;
  }

  get hasWork(): boolean {
    return !this.closed && (this.queuedN > 0 || this.leased.length > 0);
  }
}

export class SiteScheduler {
  private readonly sites = new Map<string, SiteState>();
  /** The waiting line, FIFO: sites from `waitingHead` on (a shift() per site taken was O(sites)). */
  private waiting: SiteState[] = [];
  private waitingHead = 0;
  private readonly active: SiteState[] = [];
  private readonly gates = new Map<string, Gate>();
  private readonly tally: SiteTally = { queued: 0, buffered: 0 };
  private rotor = 0;
  readonly policy: SitePolicy;

  constructor(policy: SitePolicy) {
    this.policy = policy;
  }

  get(site: string): SiteState {
    let s = this.sites.get(site);
    if (!s) {
      s = new SiteState(site, this.gateFor(site), this.tally);
      this.sites.set(site, s);
    }
    return s;
  }

  /** The site's state if the scheduler knows the site (get() creates it). */
  peek(site: string): SiteState | undefined {
    return this.sites.get(site);
  }

  gateFor(key: string): Gate {
    let g = this.gates.get(key);
    if (!g) {
      g = { nextStartMs: 0, lastStartMs: -Infinity };
      this.gates.set(key, g);
    }
    return g;
  }

  /** Shares the politeness clock of every site that resolves to `ip` (enforce_delay_per_ip). */
  bindGate(site: SiteState, ip: string): void {
    const g = this.gateFor(`ip:${ip}`);
    if (site.gate !== g) {
      g.nextStartMs = Math.max(g.nextStartMs, site.gate.nextStartMs);
      g.lastStartMs = Math.max(g.lastStartMs, site.gate.lastStartMs);
      site.gate = g;
    }
  }

  /** Notes queued work for a site; it joins the waiting line if it is not active. */
  addWork(site: string, n: number): SiteState {
    const s = this.get(site);
    s.queued += n;
    if (!s.active && !s.closed) this.wait(s);
    return s;
  }

  private wait(s: SiteState): void {
    if (s.waiting) return;
    s.waiting = true;
    this.waiting.push(s);
  }

  private get waitingCount(): number {
    return this.waiting.length - this.waitingHead;
  }

  /** Moves waiting sites into the active set, up to max_sites. */
  private fill(): void {
    while (this.active.length < this.policy.maxSites && this.waitingCount > 0) {
      const s = this.waiting[this.waitingHead++]!;
      s.waiting = false;
      if (this.waitingHead >= 1024 && this.waitingHead * 2 >= this.waiting.length) {
        this.waiting = this.waiting.slice(this.waitingHead);
        this.waitingHead = 0;
      }
      if (!s.hasWork) continue;
      s.active = true;
      s.sinceActive = 0;
      this.active.push(s);
    }
  }

  /** Takes finished or rotated sites out of the active set. */
  private prune(): void {
    for (let i = this.active.length - 1; i >= 0; i--) {
      const s = this.active[i]!;
      if (s.inFlight > 0 || s.busy) continue;
      const rotate = this.policy.maxInterDocs !== undefined && s.sinceActive >= this.policy.maxInterDocs && this.waitingCount > 0;
      if (!s.hasWork || rotate) {
        this.active.splice(i, 1);
        s.active = false;
        if (s.hasWork) this.wait(s);
      }
    }
  }

  /** The earliest time the site may start a request (ignoring max_pending). */
  readyAt(s: SiteState): number {
    return Math.max(s.gate.nextStartMs, s.pausedUntilMs, s.notBeforeMs);
  }

  /**
   * The earliest start for a request whose own delay is `delayMs`: the gate's
   * rule, and at least `delayMs` after the last request through the gate (a
   * sub-collection's longer delay applies to its own URIs).
   */
  earliestStart(s: SiteState, delayMs: number): number {
    return Math.max(this.readyAt(s), s.gate.lastStartMs + delayMs);
  }

  /**
   * The active sites that may start a request now, in rotating order, and
   * the time the next one becomes ready (undefined when none is waiting).
   *
   * `limit`: the caller starts at most this many (its free slots), so the
   * search stops at the limit-th ready site; `nextMs` then covers only the
   * sites looked at, which is enough because the caller has work starting
   * and is woken when it ends. The crawl loop asks after nearly every
   * fetch with one or two slots free, so collecting every ready site would
   * allocate a list of them for nothing each time (bench/README.md, *What
   * changed*, 97099d1).
   */
  ready(now: number, limit = Number.POSITIVE_INFINITY): { sites: SiteState[]; nextMs: number | undefined } {
    this.prune();
    this.fill();
    const out: SiteState[] = [];
    let next: number | undefined;
    const n = this.active.length;
    for (let k = 0; k < n && out.length < limit; k++) {
      const s = this.active[(this.rotor + k) % n]!;
      if (!s.hasWork || s.busy || s.inFlight >= this.policy.maxPending || s.committing >= COMMIT_BACKLOG * this.policy.maxPending) continue;
      const at = this.readyAt(s);
      if (at <= now) out.push(s);
      else if (next === undefined || at < next) next = at;
    }
    this.rotor = n > 0 ? (this.rotor + 1) % n : 0;
    return { sites: out, nextMs: next };
  }

  /** Records that a request to the site starts now: the gate moves on by the delay. */
  started(s: SiteState, now: number): void {
    s.inFlight++;
    s.notBeforeMs = 0;
    s.gate.lastStartMs = now;
    const backoff = s.failures > 0 ? Math.min(this.policy.delayMs(s) * 2 ** s.failures + 1000 * s.failures, this.policy.maxBackoffDelayMs) : 0;
    s.gate.nextStartMs = now + Math.max(this.policy.delayMs(s), backoff);
  }

  /**
   * The request really left (its headers are on the wire): the next start
   * waits `delay` from now, so the gap the server sees is never shorter
   * than the delay, even when this request waited for a connection.
   */
  sent(s: SiteState, now: number): void {
    s.gate.lastStartMs = Math.max(s.gate.lastStartMs, now);
    s.gate.nextStartMs = Math.max(s.gate.nextStartMs, now + this.policy.delayMs(s));
  }

  /**
   * trawl_politeness delay_factor (Heritrix): a fetch from the site ended
   * now; the gate opens `delayMs` after that end (never before `delay` after
   * the last start). While a fetch is under way, `holdUntil` keeps the gate
   * shut (`fetchStarted`), as Heritrix fetches one URI of a queue at a time.
   */
  fetchEnded(s: SiteState, now: number, delayMs: number): void {
    s.gate.nextStartMs = Math.max(now + delayMs, s.gate.lastStartMs + this.policy.delayMs(s));
  }

  /** Shuts the gate until `untilMs` (the longest delay_factor wait) while a fetch is under way; fetchEnded opens it. */
  fetchStarted(s: SiteState, untilMs: number): void {
    s.gate.nextStartMs = Math.max(s.gate.nextStartMs, untilMs);
  }

  finished(s: SiteState, counted: boolean): void {
    s.inFlight--;
    if (counted) {
      s.fetched++;
      s.sinceActive++;
    }
  }

  /** Pauses a site (Retry-After), at most max_backoff_delay. */
  pause(s: SiteState, untilMs: number, now: number): void {
    s.pausedUntilMs = Math.max(s.pausedUntilMs, Math.min(untilMs, now + this.policy.maxBackoffDelayMs));
  }

  /** Holds a site until a time, with no cap (an operator's quarantine or preemption). */
  hold(s: SiteState, untilMs: number): void {
    s.pausedUntilMs = Math.max(s.pausedUntilMs, untilMs);
  }

  /**
   * True when no site has work and nothing is in flight. Only the active set
   * and the waiting line are searched: a site with work is always in one of
   * them (addWork and prune put it there), and a site leaves the active set
   * only when nothing of it is in flight or being prepared. The crawl loop
   * asks this whenever no task runs, which in a politeness-bound crawl is
   * after nearly every fetch; walking every site known to the cycle made
   * that O(sites), 1 M iterations in a broad crawl.
   */
  idle(): boolean {
    for (const s of this.active) if (s.hasWork || s.inFlight > 0 || s.busy) return false;
    for (let i = this.waitingHead; i < this.waiting.length; i++) if (this.waiting[i]!.hasWork) return false;
    return true;
  }

  /** URIs queued or leased and not started, over every site: what a walk over all() would sum. */
  queuedTotal(): number {
    return this.tally.queued + this.tally.buffered;
  }

  activeCount(): number {
    return this.active.filter((s) => s.inFlight > 0 || s.hasWork).length;
  }

  all(): IterableIterator<SiteState> {
    return this.sites.values();
  }
}

/** Heritrix's politeness delay: `factor` × the fetch's duration, within [minMs, maxMs]. */
export interface FetchDelayPolicy {
  readonly factor: number;
  readonly minMs: number;
  readonly maxMs: number;
}

export function fetchDelayMs(durationMs: number, p: FetchDelayPolicy): number {
  return Math.min(p.maxMs, Math.max(p.minMs, p.factor * durationMs));
}
