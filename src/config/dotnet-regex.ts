/**
 * MS-FSCCFG names [MC-RegEx], the .NET regular expression language, for
 * every `regexp` rule, `exclude_headers`, `ecl_override` and `rewrite_rules`.
 * trawl runs JavaScript regular expressions, so each pattern is translated
 * once, when the configuration is loaded:
 *
 *   .NET                         JavaScript
 *   (?i) (?m) (?s) at the start  the flags i, m, s (i is then folded by hand, see core/safe-regex.ts)
 *   (?imsx-imsx:…) groups        (?ims-ims:…) (x is refused; i is folded by hand)
 *   (?'name'…)  \k'name'         (?<name>…)  \k<name>
 *   (?#comment)                  removed
 *   \A  \z  \Z                   ^  $  (?:\n?$)  (\Z consumes a final line end, which URLs and header values never have)
 *   \e  \a                       \x1B  \x07
 *   ${name} $0 in replacements   $<name> $&
 *
 * What has no faithful JavaScript equivalent is refused with an error that
 * names the construct, never silently matched differently: atomic groups
 * (?>…), possessive quantifiers, conditionals (?(…)…), balancing groups
 * (?<a-b>…), \G, named blocks \p{IsGreek}, character-class subtraction
 * [a-z-[aeiou]], inline options in the middle of a pattern, and the n and x
 * options.
 *
 * What cannot run in linear time is refused too (core/safe-regex.ts; DESIGN.md
 * "Safety defaults"): backreferences, lookaheads and lookbehinds, Unicode
 * categories \p{Lu}, (?m:…) and (?s:…) groups, and case-insensitive matching
 * of non-ASCII letters. Every other pattern runs in V8's backtracking engine
 * with the fallback to its linear-time engine, so none can stall a crawl.
 *
 * Group numbers: .NET numbers unnamed groups first and named ones after
 * them; JavaScript numbers all groups left to right. A pattern that mixes
 * (?<name>…) with (…) and refers to groups by number should use the names.
 *
 * One difference is accepted and documented: .NET's \w, \d and \b are
 * Unicode-aware, JavaScript's are ASCII. URLs are ASCII after
 * percent-encoding, so rules over URLs and host names behave the same.
 */

import { compileSafeRegex, makeSafe } from '../core/safe-regex.ts';
import type { Parsed } from './values.ts';

export interface TranslatedRegex {
  readonly source: string;
  readonly flags: string;
}

function refuse(what: string): Parsed<never> {
  return { ok: false, expected: `a .NET regular expression that JavaScript can run (${what} is not supported)` };
}

export function translateDotNetRegex(pattern: string): Parsed<TranslatedRegex> {
  let out = '';
  let unicode = false;
  let lead = '';
  let i = 0;
  let inClass = false;
  const n = pattern.length;

  // Leading inline options apply to the whole pattern.
  const leadOpts = /^\(\?([imsnx]+)(?:-([imsnx]+))?\)/.exec(pattern);
  if (leadOpts) {
    if (/[nx]/.test(leadOpts[1]! + (leadOpts[2] ?? ''))) return refuse('the n or x inline option');
    // At the start, (?-x) turns off what is off already: only the options turned on count.
    lead = [...new Set(leadOpts[1]!)].join('');
    i = leadOpts[0].length;
  }

  while (i < n) {
    const c = pattern[i]!;
    if (c === '\\') {
      const e = pattern[i + 1];
      if (e === undefined) return { ok: false, expected: 'a regular expression that does not end in a lone backslash' };
      if (!inClass && e === 'A') out += '^';
      else if (!inClass && e === 'z') out += '$';
      else if (!inClass && e === 'Z') out += '(?:\\n?$)';
      else if (e === 'G') return refuse('\\G');
      else if (e === 'e') out += '\\x1B';
      else if (e === 'a' && inClass) out += '\\x07';
      else if (e === 'a') out += '\\x07';
      else if (e === 'p' || e === 'P') {
        const m = /^\{([A-Za-z_]+)\}/.exec(pattern.slice(i + 2));
        if (!m) return refuse('\\p without {Category}');
        if (m[1]!.startsWith('Is')) return refuse(`the named block \\${e}{${m[1]}}`);
        unicode = true;
        out += `\\${e}{${m[1]}}`;
        i += 2 + m[0].length;
        continue;
      } else if (e === 'k' && pattern[i + 2] === "'") {
        const end = pattern.indexOf("'", i + 3);
        if (end < 0) return refuse("an unterminated \\k'name'");
        out += `\\k<${pattern.slice(i + 3, end)}>`;
        i = end + 1;
        continue;
      } else out += c + e;
      i += 2;
      continue;
    }
    if (inClass) {
      if (c === '-' && pattern[i + 1] === '[') return refuse('character-class subtraction [a-z-[aeiou]]');
      if (c === ']') inClass = false;
      out += c;
      i++;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += c;
      // A ']' right after '[' or '[^' is a literal in .NET; JavaScript needs it escaped.
      if (pattern[i + 1] === '^') {
        out += '^';
        i++;
      }
      if (pattern[i + 1] === ']') {
        out += '\\]';
        i++;
      }
      i++;
      continue;
    }
    if (c === '(' && pattern[i + 1] === '?') {
      const rest = pattern.slice(i + 2);
      if (rest.startsWith('#')) {
        const end = pattern.indexOf(')', i);
        if (end < 0) return refuse('an unterminated (?#comment)');
        i = end + 1;
        continue;
      }
      if (rest.startsWith('>')) return refuse('the atomic group (?>…)');
      if (rest.startsWith('(')) return refuse('the conditional (?(…)…)');
      const named = /^(?:<([A-Za-z_]\w*)>|'([A-Za-z_]\w*)')/.exec(rest);
      if (named) {
        out += `(?<${named[1] ?? named[2]}>`;
        i += 2 + named[0].length;
        continue;
      }
      if (/^(?:<|')[A-Za-z_]*\w*-/.test(rest)) return refuse('the balancing group (?<a-b>…)');
      const opts = /^([imsnx]*)(?:-([imsnx]*))?([:)])/.exec(rest);
      if (opts && (opts[1] || opts[2])) {
        if (opts[3] === ')') return refuse('inline options in the middle of a pattern');
        if (/[nx]/.test(opts[1]! + (opts[2] ?? ''))) return refuse('the n or x inline option');
        out += `(?${opts[1]}${opts[2] ? `-${opts[2]}` : ''}:`;
        i += 2 + opts[0].length;
        continue;
      }
    }
    if ((c === '+' || c === '*' || c === '?' || c === '}') && pattern[i + 1] === '+') {
      return refuse('the possessive quantifier');
    }
    out += c;
    i++;
  }
  const flags = lead + (unicode ? 'u' : '');
  try {
    new RegExp(out, flags);
  } catch (err) {
    return { ok: false, expected: `a valid regular expression (${(err as Error).message.replace(/^Invalid regular expression: /, '')})` };
  }
  const safe = makeSafe(out, flags);
  if (!safe.ok) return { ok: false, expected: `a regular expression that can run in linear time (${safe.reason})` };
  return { ok: true, value: safe.value };
}

/** Compiles a .NET pattern to a JavaScript RegExp, or throws with the reason. */
export function compileDotNetRegex(pattern: string): RegExp {
  const t = translateDotNetRegex(pattern);
  if (!t.ok) throw new Error(`cannot use /${pattern}/: expected ${t.expected}`);
  return compileSafeRegex(t.value.source, t.value.flags, `the translation of /${pattern}/`);
}

/** Translates a .NET replacement string ($1, ${name}, $0, $$) to JavaScript's. */
export function translateDotNetReplacement(replacement: string): string {
  return replacement.replace(/\$(\$|\{(\w+)\}|0(?!\d)|_)/g, (all, what: string, name: string | undefined) => {
    if (what === '$') return '$$';
    // ${1} → $01: the two-digit form keeps a following digit literal ("${1}0" is group 1, then "0").
    if (name !== undefined) return /^\d+$/.test(name) ? `$${name.padStart(2, '0')}` : `$<${name}>`;
    if (what === '0') return '$&';
    return all;
  });
}

export function checkDotNetRegex(text: string): string | undefined {
  const t = translateDotNetRegex(text);
  return t.ok ? undefined : t.expected;
}
