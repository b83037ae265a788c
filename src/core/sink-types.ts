/**
 * The sink type names the configuration language knows
 * (`trawl_sinks.<sink>.type`): the one list the configuration registry's
 * allowed values, its validation rules, the Elastic YAML reader's
 * `output_sink` and the README reference are derived from.
 *
 * It lives in `core` because `config` may not import `sinks`. The sink
 * registry (`src/sinks/sink-registry.ts`) holds the implementations; its
 * test checks that every available type here has one, and that the
 * registry's built-in types are all here.
 */

/** Types this version delivers to, each with the words the reference describes it in. */
export const AVAILABLE_SINK_TYPES = ['console', 'file', 'elasticsearch', 'repository', 'jms'] as const;

export type AvailableSinkType = (typeof AVAILABLE_SINK_TYPES)[number];

const MEANINGS: Readonly<Record<AvailableSinkType, string>> = {
  console: 'JSON lines on stdout',
  file: 'one JSON file per document',
  elasticsearch: '_bulk API',
  repository: 'the CiteSeerX crawler repository: each file as fetched, host then path, with a CrawlData XML sidecar',
  jms: 'the repository, and a CiteSeerX New Content Message per file to ActiveMQ over STOMP',
};

/** Types the configuration accepts but this version refuses when the sink is used (kept so configurations naming them still read). */
export const RESERVED_SINK_TYPES = ['warc'] as const;

/** Every value `trawl_sinks.<sink>.type` may take, available ones first. */
export const SINK_TYPES = [...AVAILABLE_SINK_TYPES, ...RESERVED_SINK_TYPES] as const;

/** The `type` parameter's meaning for the configuration reference. */
export function sinkTypeMeaning(): string {
  const available = AVAILABLE_SINK_TYPES.map((t) => `${t} (${MEANINGS[t]})`).join(', ');
  const reserved: readonly string[] = RESERVED_SINK_TYPES;
  const names = reserved.length === 1 ? `${reserved[0]!} is` : `${reserved.slice(0, -1).join(', ')} and ${reserved.at(-1)!} are`;
  return `Sink type: ${available}; ${names} reserved and refused by this version.`;
}
