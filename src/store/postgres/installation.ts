/**
 * The multinode installation on PostgreSQL (`trawl serve --node NAME
 * --store postgres://…`, `trawl serve --role scheduler`): the members and
 * their admin addresses, their heartbeats, and which node each site is
 * routed to. Everything here lives in the database, so that a node can
 * die with nothing lost but its fetches in flight.
 *
 *   trawl_nodes        name PK, role (node | scheduler), admin host and port, heartbeat, log level
 *   trawl_site_routes  (collection, site) PK → cluster, node, free_at_ms
 *
 * Tables of their own (not columns of the crawl store's), created when a
 * member first opens the database (INSTALLATION_SCHEMA, run by
 * migrations.ts with the crawl store's schema, under its advisory lock).
 *
 * Every `tick` (heartbeat interval = node timeout / 4) a node:
 *   1. renews its heartbeat and the leases of its in-flight URIs;
 *   2. under an advisory lock (one member at a time): routes the sites of
 *      dead members (no heartbeat for the node timeout) to the live ones,
 *      routes new sites with queued URIs (a cluster, domain_clustering or
 *      site_clusters, stays on one node), gives its own idle sites beyond
 *      its fair share to the least loaded live node (a node that comes back
 *      takes a share again), and puts expired leases back in the queue;
 *   3. reads the sites routed to it, and which of them have queued URIs.
 *
 * A site is routed to one node at a time, and the lease statement of a
 * node leases only URIs of the sites routed to it (leaseRouted in
 * statements.ts): two nodes never hold URIs of one site at once. A node
 * whose heartbeat could not be written for half the node timeout stops
 * starting fetches (`fenced`) until it can again, since the others will
 * take its sites when the timeout has passed.
 */

import pg from 'pg';
import { connectionError, type Client } from './connection.ts';

export { INSTALLATION_SCHEMA } from './installation-schema.ts';

/** Default time without a heartbeat after which a node is dead: its sites move, its leases expire. */
export const DEFAULT_NODE_TIMEOUT_MS = 30_000;

/** The advisory lock the routing step holds (an arbitrary constant: "trawlR" in ASCII). */
const ROUTE_LOCK = 0x74726177_6c52;


export type MemberRole = 'node' | 'scheduler';

export interface Member {
  readonly name: string;
  readonly role: MemberRole;
  readonly host: string;
  readonly port: number;
  readonly live: boolean;
}

/** A site routed to this node, with when it may be fetched first (another node gave it away with its delay running). */
export interface OwnedSite {
  readonly freeAtMs: number;
}

/** What the installation needs from the service on each tick. */
export interface TickHooks {
  /** The collections this member crawls (their names as the store holds them). */
  collections(): readonly string[];
  /** The cluster a site belongs to (domain_clustering, site_clusters); the site itself when none. */
  clusterOf(collection: string, site: string): string;
  /** A site this node may give away now: nothing leased, in flight or committing; whether it has work left; and when its next request may start (ms). */
  idleSite(collection: string, site: string): { idle: boolean; hasWork: boolean; nextStartMs: number };
  /** Sites of this node with queued URIs (after the routes were read): a running crawl is told. */
  work(collection: string, sites: ReadonlyArray<{ site: string; queued: number }>): void;
  /** Leases this node holds are renewed by the crawl store (PostgresCrawlStore.renewLeases). */
  renew(collection: string): Promise<unknown>;
  /** Expired leases back to the queue (PostgresCrawlStore.recoverExpiredLeases). */
  recoverExpired(collection: string): Promise<number>;
  /** The installation's log level changed (SetLogLevel forwarded through the database). */
  logLevel?(mask: number): void;
  /** A tick failed (the database unreachable, above all): it is tried again at the next one. */
  error?(err: unknown): void;
  /** First on each tick: the member's collections follow the database's. */
  sync?(): Promise<void>;
}

const toDb = (s: string): string => s.replaceAll('\u0001', '\u0001\u0002').replaceAll('\u0000', '\u0001\u0001');

export class Installation {
  readonly name: string;
  readonly role: MemberRole;
  readonly timeoutMs: number;
  private readonly pool: pg.Pool;
  private readonly url: string;
  /** collection → site → routed to this node. */
  private owned = new Map<string, Map<string, OwnedSite>>();
  /** collection → site → node (another one). */
  private others = new Map<string, Map<string, string>>();
  private lastBeatMs = 0;
  /** collection NUL site: sites this node is giving away in the routing step under way (not its own any more). */
  private readonly giving = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private lastLogLevel: number | undefined;
  private hooks: TickHooks | undefined;
  private readonly now: () => number;
  private host = '';
  private port = 0;
  /** The bearer token the members' admin servers take (the same on every member): the scheduler forwards calls with it. */
  token: string | undefined;

  private constructor(url: string, pool: pg.Pool, name: string, role: MemberRole, timeoutMs: number, now: () => number) {
    this.url = url;
    this.pool = pool;
    this.name = name;
    this.role = role;
    this.timeoutMs = timeoutMs;
    this.now = now;
  }

  /** Joins the installation at `url` as `name`, answering at host:port (its heartbeat written now). */
  static async join(url: string, o: { name: string; role: MemberRole; host: string; port: number; timeoutMs?: number; token?: string; now?: () => number }): Promise<Installation> {
    const pool = new pg.Pool({ connectionString: url, max: 3, connectionTimeoutMillis: 10_000, idleTimeoutMillis: 30_000 });
    pool.on('error', () => {});
    try {
      await pool.query(
        `INSERT INTO trawl_nodes (name, role, admin_host, admin_port, started, heartbeat) VALUES ($1, $2, $3, $4, now(), now())
         ON CONFLICT (name) DO UPDATE SET role = excluded.role, admin_host = excluded.admin_host, admin_port = excluded.admin_port, started = now(), heartbeat = now()`,
        [o.name, o.role, o.host, o.port]);
    } catch (err) {
      await pool.end().catch(() => {});
      throw connectionError(url, err);
    }
    const m = new Installation(url, pool, o.name, o.role, o.timeoutMs ?? DEFAULT_NODE_TIMEOUT_MS, o.now ?? Date.now);
    m.lastBeatMs = m.now();
    m.host = o.host;
    m.port = o.port;
    m.token = o.token;
    return m;
  }

  /** The heartbeat interval: a quarter of the node timeout. */
  get beatMs(): number {
    return Math.max(100, Math.floor(this.timeoutMs / 4));
  }

  /** Starts the ticks (heartbeat, routing, work); `hooks` says what the service crawls. */
  start(hooks: TickHooks): void {
    this.hooks = hooks;
    const loop = (): void => {
      this.ticking = this.tick().catch((err: unknown) => this.hooks?.error?.(err)).finally(() => {
        this.ticking = undefined;
        if (this.hooks) this.timer = setTimeout(loop, this.beatMs);
      });
    };
    loop();
  }

  /** Runs a tick now (after the one under way, if any). */
  async tickNow(): Promise<void> {
    if (this.ticking) await this.ticking;
    await this.tick().catch(() => {});
  }

  /** True when the heartbeat could not be written for half the node timeout: start no fetch. */
  get fenced(): boolean {
    return this.role === 'node' && this.now() - this.lastBeatMs > this.timeoutMs / 2;
  }

  /** 'me', 'other' (routed to another node) or undefined (not routed yet), as of the last tick. */
  ownerOf(collection: string, site: string): 'me' | 'other' | undefined {
    if (this.giving.size > 0 && this.giving.has(`${collection}\u0000${site}`)) return 'other';
    if (this.owned.get(collection)?.has(site)) return 'me';
    return this.others.get(collection)?.has(site) ? 'other' : undefined;
  }

  /** The sites routed to this node in `collection` with a time they may not be fetched before. */
  heldUntil(collection: string): ReadonlyMap<string, number> {
    const out = new Map<string, number>();
    for (const [site, o] of this.owned.get(collection) ?? []) if (o.freeAtMs > this.now()) out.set(site, o.freeAtMs);
    return out;
  }

  /** One tick (see the file comment). */
  private async tick(): Promise<void> {
    const hooks = this.hooks;
    if (!hooks) return;
    // An upsert: a member whose row was removed (it was taken for gone) registers again.
    const beat = await this.pool.query<{ log_level: number | null }>(
      `WITH b AS (INSERT INTO trawl_nodes (name, role, admin_host, admin_port) VALUES ($1, $2, $3, $4)
                  ON CONFLICT (name) DO UPDATE SET heartbeat = now() RETURNING 1)
       SELECT (SELECT log_level FROM trawl_nodes WHERE role = 'scheduler' AND log_level IS NOT NULL ORDER BY heartbeat DESC LIMIT 1) AS log_level FROM b`,
      [this.name, this.role, this.host, this.port]);
    this.lastBeatMs = this.now();
    const level = beat.rows[0]?.log_level;
    if (level !== null && level !== undefined && level !== this.lastLogLevel) {
      this.lastLogLevel = level;
      hooks.logLevel?.(level);
    }
    if (this.role !== 'node') return;
    await hooks.sync?.();
    const collections = hooks.collections();
    for (const c of collections) await hooks.renew(c);
    const c = await this.pool.connect();
    try {
      await c.query('BEGIN');
      await c.query('SELECT pg_advisory_xact_lock($1)', [ROUTE_LOCK]);
      // The routes of deleted collections go with them.
      await c.query('DELETE FROM trawl_site_routes r WHERE NOT EXISTS (SELECT 1 FROM collections c WHERE c.name = r.collection)');
      for (const coll of collections) await this.route(c, coll, hooks);
      await c.query('COMMIT');
    } catch (err) {
      await c.query('ROLLBACK').catch(() => {});
      // Nothing was given away: the sites are this node's again.
      this.giving.clear();
      throw err;
    } finally {
      c.release();
    }
    for (const coll of collections) await hooks.recoverExpired(coll);
    await this.readRoutes(collections, hooks);
    this.giving.clear();
  }

  /** Live node-role members, by name (the heartbeat within the timeout). */
  private async liveNodes(c: Client): Promise<string[]> {
    const r = await c.query<{ name: string }>(
      "SELECT name FROM trawl_nodes WHERE role = 'node' AND heartbeat > now() - $1::float8 * interval '1 millisecond' ORDER BY name", [this.timeoutMs]);
    return r.rows.map((x) => x.name);
  }

  /** The routing step of one collection, under ROUTE_LOCK. */
  private async route(c: Client, collection: string, hooks: TickHooks): Promise<void> {
    const live = await this.liveNodes(c);
    if (!live.includes(this.name)) live.push(this.name);
    const coll = toDb(collection);
    const routes = (await c.query<{ site: string; cluster: string; node: string }>('SELECT site, cluster, node FROM trawl_site_routes WHERE collection = $1', [coll])).rows;
    // Load per live node: its clusters.
    const clustersOf = new Map<string, Set<string>>(live.map((n) => [n, new Set()]));
    const nodeOfCluster = new Map<string, string>();
    for (const r of routes) {
      if (clustersOf.has(r.node)) {
        clustersOf.get(r.node)!.add(r.cluster);
        nodeOfCluster.set(r.cluster, r.node);
      }
    }
    const leastLoaded = (except?: string): string => {
      let best = '';
      let n = Infinity;
      for (const [node, set] of clustersOf) if (node !== except && set.size < n) [best, n] = [node, set.size];
      return best;
    };
    const move = async (cluster: string, to: string, freeAtMs: number | null): Promise<void> => {
      await c.query('UPDATE trawl_site_routes SET node = $3, free_at_ms = $4 WHERE collection = $1 AND cluster = $2', [coll, cluster, to, freeAtMs]);
      for (const set of clustersOf.values()) set.delete(cluster);
      clustersOf.get(to)!.add(cluster);
      nodeOfCluster.set(cluster, to);
    };
    // 1. The clusters of dead members go to the live ones, least loaded first.
    const dead = new Set<string>();
    for (const r of routes) if (!clustersOf.has(r.node)) dead.add(r.cluster);
    for (const cluster of dead) await move(cluster, nodeOfCluster.get(cluster) ?? leastLoaded(), null);
    // 2. New sites with queued URIs: with their cluster, or to the least loaded node.
    const fresh = await c.query<{ site: string }>(
      `SELECT DISTINCT f.site FROM frontier f WHERE f.collection = $1 AND f.state = 0
         AND NOT EXISTS (SELECT 1 FROM trawl_site_routes r WHERE r.collection = f.collection AND r.site = f.site)`, [coll]);
    for (const { site } of fresh.rows) {
      const cluster = hooks.clusterOf(collection, site);
      const node = nodeOfCluster.get(cluster) ?? leastLoaded();
      await c.query('INSERT INTO trawl_site_routes (collection, site, cluster, node) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [coll, site, cluster, node]);
      clustersOf.get(node)!.add(cluster);
      nodeOfCluster.set(cluster, node);
    }
    // 3. This node gives idle clusters beyond its fair share to the least loaded node.
    const total = [...clustersOf.values()].reduce((n, s) => n + s.size, 0);
    const share = Math.ceil(total / clustersOf.size);
    const mine = clustersOf.get(this.name)!;
    if (mine.size > share) {
      const sitesOf = new Map<string, string[]>();
      for (const r of routes) if (r.node === this.name) sitesOf.set(r.cluster, [...(sitesOf.get(r.cluster) ?? []), r.site]);
      // Clusters with work to do first: giving away a finished site balances nothing.
      const candidates = [...mine].map((cluster) => {
        const states = (sitesOf.get(cluster) ?? []).map((s) => hooks.idleSite(collection, s));
        return { cluster, states, work: states.some((s) => s.hasWork) };
      }).sort((a, b) => Number(b.work) - Number(a.work));
      for (const { cluster } of candidates) {
        if (mine.size <= share) break;
        const to = leastLoaded(this.name);
        if (to === '' || (clustersOf.get(to)?.size ?? 0) + 1 >= mine.size) break;
        // Checked again now, and given up at once (no await between): from here this node starts no fetch of them.
        const sites = sitesOf.get(cluster) ?? [];
        const now = sites.map((site) => hooks.idleSite(collection, site));
        if (!now.every((x) => x.idle)) continue;
        for (const site of sites) this.giving.add(`${collection}\u0000${site}`);
        await move(cluster, to, Math.max(0, ...now.map((x) => x.nextStartMs)));
      }
    }
  }

  /** Reads the routes (this node's and the others'), and tells the crawls which of this node's sites have queued URIs. */
  private async readRoutes(collections: readonly string[], hooks: TickHooks): Promise<void> {
    const owned = new Map<string, Map<string, OwnedSite>>();
    const others = new Map<string, Map<string, string>>();
    for (const collection of collections) {
      const r = await this.pool.query<{ site: string; node: string; free_at_ms: string | null }>(
        'SELECT site, node, free_at_ms FROM trawl_site_routes WHERE collection = $1', [toDb(collection)]);
      const mine = new Map<string, OwnedSite>();
      const theirs = new Map<string, string>();
      for (const row of r.rows) {
        if (row.node === this.name) mine.set(row.site, { freeAtMs: Number(row.free_at_ms ?? 0) });
        else theirs.set(row.site, row.node);
      }
      owned.set(collection, mine);
      others.set(collection, theirs);
    }
    this.owned = owned;
    this.others = others;
    for (const collection of collections) {
      const mine = owned.get(collection)!;
      if (mine.size === 0) continue;
      const w = await this.pool.query<{ site: string; n: string }>(
        `SELECT f.site, count(*) AS n FROM frontier f JOIN trawl_site_routes r ON r.collection = f.collection AND r.site = f.site AND r.node = $2
         WHERE f.collection = $1 AND f.state = 0 AND (f.flags & 16) = 0 GROUP BY f.site`, [toDb(collection), this.name]);
      if (w.rows.length > 0) hooks.work(collection, w.rows.map((x) => ({ site: x.site, queued: Number(x.n) })));
    }
  }

  /** The members, live or not (GetNodeSchedulerXmlRpcPorts lists the live node-role ones). */
  async members(): Promise<Member[]> {
    const r = await this.pool.query<{ name: string; role: MemberRole; admin_host: string; admin_port: number; live: boolean }>(
      `SELECT name, role, admin_host, admin_port, heartbeat > now() - $1::float8 * interval '1 millisecond' AS live FROM trawl_nodes ORDER BY name`, [this.timeoutMs]);
    return r.rows.map((x) => ({ name: x.name, role: x.role, host: x.admin_host, port: x.admin_port, live: x.live }));
  }

  /** The node a site is routed to (its admin address), or undefined when it is not routed yet. */
  async routeOf(collection: string, sites: readonly string[]): Promise<Member | undefined> {
    const r = await this.pool.query<{ node: string }>('SELECT node FROM trawl_site_routes WHERE collection = $1 AND site = ANY($2::text[]) LIMIT 1', [toDb(collection), sites]);
    const node = r.rows[0]?.node;
    if (node === undefined) return undefined;
    return (await this.members()).find((m) => m.name === node);
  }

  /** How many sites are routed to each node (for statistics and tests). */
  async routeCounts(collection: string): Promise<Record<string, number>> {
    const r = await this.pool.query<{ node: string; n: string }>('SELECT node, count(*) AS n FROM trawl_site_routes WHERE collection = $1 GROUP BY node', [toDb(collection)]);
    return Object.fromEntries(r.rows.map((x) => [x.node, Number(x.n)]));
  }

  /** True when the collection has URIs queued or leased anywhere in the installation (a node's cycle is not over). */
  async pending(collection: string): Promise<boolean> {
    const r = await this.pool.query('SELECT 1 FROM frontier WHERE collection = $1 AND state IN (0, 1) LIMIT 1', [toDb(collection)]);
    return (r.rowCount ?? 0) > 0;
  }

  /** Writes the log level for every member to read at its next tick (SetLogLevel on the scheduler). */
  async setLogLevel(mask: number): Promise<void> {
    await this.pool.query('UPDATE trawl_nodes SET log_level = $2 WHERE name = $1', [this.name, mask]);
    this.lastLogLevel = mask;
  }

  /** The admin address this member answers on, once it listens (a port 0 becomes the real one). */
  async setAddress(host: string, port: number): Promise<void> {
    this.host = host;
    this.port = port;
    await this.pool.query('UPDATE trawl_nodes SET admin_host = $2, admin_port = $3 WHERE name = $1', [this.name, host, port]);
  }

  /** Leaves: ticks stop; with `deregister`, the member's row goes (its sites move at the others' next tick). */
  async leave(deregister = true): Promise<void> {
    this.hooks = undefined;
    clearTimeout(this.timer);
    if (this.ticking) await this.ticking;
    if (deregister) await this.pool.query('DELETE FROM trawl_nodes WHERE name = $1', [this.name]).catch(() => {});
    await this.pool.end().catch(() => {});
  }

  /** The store URL (password included: show it masked). */
  get storeUrl(): string {
    return this.url;
  }
}
