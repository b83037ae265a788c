/**
 * The shape of the parameter registry: what one attrib or section of
 * MS-FSCCFG is, and the typed view the engine gets of a configuration.
 *
 *   SectionDef ─┬─ attribs:  AttribDef[]        (fixed names: delay, refresh, …)
 *               ├─ sections: SectionDef[]       (fixed names: storage, rss, …)
 *               ├─ dynamicAttrib?:  AttribDef   (names chosen by the user: http_errors "404")
 *               └─ dynamicSection?: SectionDef  (names chosen by the user: feeding "Global_News")
 *
 * The registry itself lives in `registry.ts`. Everything else (the reader,
 * validator, writer, merge, the README's reference) is driven by it.
 */

/**
 * How a secret parameter is masked when printed (`secrets.ts` maskValue):
 *   value        the whole value                       (post_payload, login parameters, sink password)
 *   credentials  the password field of user:password…  (passwd, ftp_acct)
 *   proxy        the password of (http://)(user:password@)host(:port)
 *   headers      the value of a secret header line      (Authorization, Cookie, …)
 *   url          the password of URL userinfo           (start URIs, sink URLs)
 */
export type SecretKind = 'value' | 'credentials' | 'proxy' | 'headers' | 'url';

export type ParamType = 'boolean' | 'integer' | 'real' | 'string' | 'list-string';
export type ParamValue = boolean | number | string | readonly string[];

/**
 * Whether this version acts on a parameter (issue 29): `full`; `not` (read,
 * validated, then ignored); or `partly`, with what is missing in one short
 * sentence and, when only some values are ignored, those values (a warning
 * is given only for them). A parameter flips to `full` when the engine,
 * service or sinks read its typed setting.
 */
export type Honoured = 'full' | 'not' | { readonly partly: string; readonly values?: readonly string[] };

/** Where a collection-level parameter may also appear. */
export interface AttribDef {
  readonly kind: 'attrib';
  /** The XML name. For a dynamic attrib this is a placeholder such as `<code>`. */
  readonly name: string;
  /** The code name, camelCase with the unit: `delayS`, `cutOffBytes`. */
  readonly key: string;
  readonly type: ParamType;
  /** Absent means N/A: the parameter has no default. */
  readonly default?: ParamValue;
  /** How the default reads in the docs when it is not the literal value. */
  readonly defaultDoc?: string;
  /** One line: what the parameter does. */
  readonly meaning: string;
  /** The spec section, e.g. `MS-FSCCFG 2.2.3`, or `trawl extension`. */
  readonly spec: string;
  /** Whether this version honours the parameter; required so that every entry says. */
  readonly honoured: Honoured;
  readonly unit?: string;
  /** Allowed values (for list-string: allowed members). Compared case-sensitively unless `caseInsensitive`. */
  readonly allowed?: readonly string[];
  readonly caseInsensitive?: boolean;
  readonly min?: number;
  readonly max?: number;
  /** Checks one value (or one member of a list); returns what was expected when it fails. */
  readonly check?: (text: string) => string | undefined;
  /** Other spellings that are read as this parameter (the spec's contradictions). */
  readonly aliases?: readonly string[];
  /** Masked (as this kind says) wherever a configuration is printed or logged. */
  readonly secret?: SecretKind;
  /** Allowed inside a sub-collection (MS-FSCCFG 2.2.4.33). */
  readonly sub?: boolean;
  /** For a dynamic attrib: checks the user's name; returns what was expected when it fails. */
  readonly nameCheck?: (name: string) => string | undefined;
}

export interface SectionDef {
  readonly kind: 'section';
  /** The XML name. For a dynamic section this is a placeholder such as `<destination>`. */
  readonly name: string;
  readonly key: string;
  readonly meaning: string;
  readonly spec: string;
  /** `not`: the whole section is ignored (one warning for it); otherwise its attribs say. */
  readonly honoured: Honoured;
  readonly attribs: readonly AttribDef[];
  readonly sections: readonly SectionDef[];
  readonly dynamicAttrib?: AttribDef;
  readonly dynamicSection?: SectionDef;
  /**
   * Where the dynamic children go in the typed view. Absent: the section's
   * value *is* the record of its dynamic children.
   */
  readonly dynamicAs?: string;
  /** Default entries of a dynamic-attrib section (http_errors 2.2.4.12). */
  readonly defaults?: Readonly<Record<string, ParamValue>>;
  readonly sub?: boolean;
  readonly nameCheck?: (name: string) => string | undefined;
}

// ------------------------------------------------------------ typed view

export type ValueOf<T extends ParamType> = T extends 'boolean'
  ? boolean
  : T extends 'integer' | 'real'
    ? number
    : T extends 'string'
      ? string
      : readonly string[];

type AttribValues<A extends readonly AttribDef[]> = {
  readonly [P in A[number] as P['key']]: ValueOf<P['type']> | (P extends { default: ParamValue } ? never : undefined);
};

type SectionValues<S extends readonly SectionDef[]> = {
  readonly [Q in S[number] as Q['key']]: Settings<Q>;
};

type DynamicAttribValues<S extends SectionDef> = S extends { dynamicAttrib: infer D extends AttribDef }
  ? Readonly<Record<string, ValueOf<D['type']>>>
  : never;

type DynamicSectionValues<S extends SectionDef> = S extends { dynamicSection: infer D extends SectionDef }
  ? Readonly<Record<string, Settings<D>>>
  : never;

type Dynamic<S extends SectionDef> = [DynamicAttribValues<S>] extends [never]
  ? [DynamicSectionValues<S>] extends [never]
    ? unknown
    : DynamicSectionValues<S>
  : DynamicAttribValues<S>;

/**
 * The typed, effective view of a section: every fixed parameter under its
 * code name (with defaults applied, `undefined` only where the spec has no
 * default), every fixed sub-section as a nested object, and dynamic children
 * as a record, either as the section's value itself or under `dynamicAs`.
 */
export type Settings<S extends SectionDef> = S extends { dynamicAs: infer K extends string }
  ? AttribValues<S['attribs']> & SectionValues<S['sections']> & { readonly [P in K]: Dynamic<S> }
  : [Dynamic<S>] extends [unknown]
    ? unknown extends Dynamic<S>
      ? AttribValues<S['attribs']> & SectionValues<S['sections']>
      : Dynamic<S>
    : never;

// ------------------------------------------------------------ constructors

/** Keeps the literal types of a definition so that `Settings<>` can read them. */
export const attrib = <const T extends Omit<AttribDef, 'kind'>>(d: T): T & { readonly kind: 'attrib' } => ({ kind: 'attrib', ...d });
export const section = <const T extends Omit<SectionDef, 'kind'>>(d: T): T & { readonly kind: 'section' } => ({
  kind: 'section',
  ...d,
});
