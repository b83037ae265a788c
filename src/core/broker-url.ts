/**
 * The ActiveMQ broker URL a jms sink is given, as the STOMP address trawl
 * sends to (docs/citeseerx.md "The broker URL"). In `core` because the
 * configuration rules check it and `config` may not import `sinks`.
 *
 *   stomp://host:port, stomp+nio://host:port   as written (default port 61613)
 *   tcp://host:port, nio://host:port            OpenWire, as csx-heritrix.xml writes it:
 *                                               STOMP on host:61613, with a warning
 *   anything else (ssl://, failover:(…), amqp://) refused
 */

export const STOMP_DEFAULT_PORT = 61613;

export interface BrokerAddress {
  readonly host: string;
  readonly port: number;
  /** Said once when the sink opens: how an OpenWire URL was mapped. */
  readonly warning?: string;
}

/** The STOMP address a broker URL names, or a reason it names none. */
export function brokerAddress(url: string): BrokerAddress | { readonly problem: string } {
  const m = /^([a-z][a-z0-9+.-]*):\/\/(\[[^\]]+\]|[^/:?#]+)(?::(\d+))?\/?(?:\?.*)?$/i.exec(url.trim());
  if (!m) return { problem: 'is not a broker URL (stomp://host:port, or tcp://host:port as ActiveMQ writes it)' };
  const scheme = m[1]!.toLowerCase();
  const host = m[2]!.replace(/^\[|\]$/g, '');
  const port = m[3] === undefined ? undefined : Number(m[3]);
  if (port !== undefined && (port < 1 || port > 65535)) return { problem: `has port ${port}, outside 1-65535` };
  if (scheme === 'stomp' || scheme === 'stomp+nio') return { host, port: port ?? STOMP_DEFAULT_PORT };
  if (scheme === 'tcp' || scheme === 'nio') {
    return {
      host,
      port: STOMP_DEFAULT_PORT,
      warning: `${scheme}://${m[2]!}${port !== undefined ? `:${port}` : ''} is ActiveMQ's OpenWire protocol, which trawl does not speak: sending over STOMP to ${m[2]!}:${STOMP_DEFAULT_PORT} instead (ActiveMQ's STOMP connector); write stomp://host:port to choose another port`,
    };
  }
  return { problem: `has the scheme ${scheme}://, which trawl cannot send over (stomp://, or tcp:// mapped to STOMP on ${STOMP_DEFAULT_PORT}; no TLS, no failover:)` };
}
