/**
 * The multinode installation's tables (installation.ts), created with the
 * crawl store's schema (migrations.ts) and kept apart from it: tables of
 * their own, each created if missing, so that they need no schema version.
 *
 *   trawl_nodes        one row per member: role, admin address, heartbeat, the log level a scheduler set
 *   trawl_site_routes  one row per (collection, site): its cluster and the node it is routed to;
 *                      free_at_ms, when the node that gave it away allows its next request
 */

export const INSTALLATION_SCHEMA = `
CREATE TABLE IF NOT EXISTS trawl_nodes (
  name text COLLATE "C" PRIMARY KEY,
  role text NOT NULL,
  admin_host text NOT NULL,
  admin_port integer NOT NULL,
  started timestamptz NOT NULL DEFAULT now(),
  heartbeat timestamptz NOT NULL DEFAULT now(),
  log_level integer
);
CREATE TABLE IF NOT EXISTS trawl_site_routes (
  collection text COLLATE "C" NOT NULL,
  site text COLLATE "C" NOT NULL,
  cluster text COLLATE "C" NOT NULL,
  node text COLLATE "C" NOT NULL,
  free_at_ms bigint,
  PRIMARY KEY (collection, site)
);
CREATE INDEX IF NOT EXISTS trawl_site_routes_node ON trawl_site_routes (node);
`;
