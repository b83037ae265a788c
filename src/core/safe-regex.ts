/**
 * Every regular expression a user configures (include/exclude_uris and
 * include/exclude_domains regexp rules, rewrite_rules, exclude_headers,
 * ecl_override, Elastic crawl rules, LOCKSS rules) is compiled here, so that
 * none can stall the crawler (DESIGN.md "Safety defaults": every configured
 * regular expression runs in linear time or under a limit).
 *
 *   pattern ──► case folded by hand when it asks for `i` (V8's linear engine
 *   │           has no case-insensitive mode): `a` → `[aA]`, `[a-f]` → `[a-fA-F]`,
 *   │           `(?i:…)` → `(?:…)` with its content folded
 *   ▼
 *   new RegExp(source, flags + 'l')   only to ask V8 whether its linear-time
 *   │                                 engine can run it; if it cannot
 *   │                                 (backreferences, lookarounds, \p{…}, the
 *   │                                 u flag), the pattern is refused with the reason
 *   ▼
 *   new RegExp(source, flags)         the RegExp used: irregexp (backtracking)
 *                                     runs first, and after
 *                                     --regexp-backtracks-before-fallback (V8's
 *                                     default: 50,000) backtracks in one match V8
 *                                     runs it again in the linear engine
 *                                     (--enable-experimental-regexp-engine-on-excessive-backtracks)
 *
 * So an ordinary match costs what it always did, and `^(a+)+$` against
 * `aaa…ab` ends in about a millisecond instead of never. Refusing what the
 * linear engine cannot run is what makes the fallback a guarantee: for such a
 * pattern V8 would keep backtracking. The V8 flags are process-wide (worker
 * threads share them) and are set when this module is first imported, before
 * any pattern it compiles; V8 reads them when it compiles a pattern, which is
 * at its first match.
 */

import { setFlagsFromString } from 'node:v8';

// --enable-experimental-regexp-engine only makes the `l` flag available, which
// linearProblem uses to ask V8 whether a pattern is supported.
setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');
setFlagsFromString('--enable-experimental-regexp-engine');

/** A pattern and its flags, as `new RegExp` takes them. */
export interface RegexSource {
  readonly source: string;
  readonly flags: string;
}

/** `syntax`: not a regular expression at all; `linear`: valid, but it could not run in linear time. */
export type SafeRegexResult = { ok: true; value: RegexSource } | { ok: false; kind: 'syntax' | 'linear'; reason: string };

const isAscii = (s: string): boolean => [...s].every((c) => c.charCodeAt(0) < 0x80);
const isAsciiLetter = (c: string): boolean => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
const otherCase = (c: string): string => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase());

/** The character a `\xHH` / `\uHHHH` escape at `i` stands for, and the escape's length. */
function hexEscape(p: string, i: number): { ch: string; len: number } | undefined {
  const m = /^\\(?:x([0-9A-Fa-f]{2})|u([0-9A-Fa-f]{4}))/.exec(p.slice(i, i + 6));
  return m ? { ch: String.fromCharCode(parseInt(m[1] ?? m[2]!, 16)), len: m[0].length } : undefined;
}

/**
 * Rewrites a pattern so that it matches ASCII letters in either case without
 * the `i` flag, where `i` (the `fold` argument) or an `(?i:…)` group asks for
 * it; `(?-i:…)` turns it off again. Modifier groups lose their `i`/`-i`
 * (an emptied one becomes `(?:`). Only ASCII letters are folded: a non-ASCII
 * letter where folding applies makes the result undefined (the caller refuses
 * the pattern), since URLs and header values are ASCII after
 * percent-encoding and a silent difference would be worse.
 */
export function foldCase(pattern: string, fold: boolean): string | undefined {
  let out = '';
  const stack: boolean[] = [];
  let on = fold;
  let i = 0;
  const n = pattern.length;
  while (i < n) {
    const c = pattern[i]!;
    if (c === '\\') {
      const e = pattern[i + 1];
      if (e === undefined) return undefined;
      const hex = hexEscape(pattern, i);
      if (on && hex && isAsciiLetter(hex.ch)) {
        out += `[${hex.ch}${otherCase(hex.ch)}]`;
        i += hex.len;
        continue;
      }
      // \k<name>, \p{…}, \cX: copied whole so their letters are not folded.
      const named = /^\\(?:k<[^>]*>|[pP]\{[^}]*\}|c[A-Za-z])/.exec(pattern.slice(i));
      const len = named ? named[0].length : 2;
      out += pattern.slice(i, i + len);
      i += len;
      continue;
    }
    if (c === '[') {
      // A class: copy it, adding the other case of each letter and letter range.
      let j = i + 1;
      let cls = '[';
      if (pattern[j] === '^') {
        cls += '^';
        j++;
      }
      let extra = '';
      while (j < n && pattern[j] !== ']') {
        let atom: string;
        let ch: string | undefined;
        if (pattern[j] === '\\') {
          const hex = hexEscape(pattern, j);
          if (hex) {
            atom = pattern.slice(j, j + hex.len);
            ch = hex.ch;
          } else {
            const named = /^\\(?:[pP]\{[^}]*\}|c[A-Za-z])/.exec(pattern.slice(j));
            atom = named ? named[0] : pattern.slice(j, j + 2);
            ch = undefined;
          }
        } else {
          atom = pattern[j]!;
          ch = atom;
        }
        j += atom.length;
        // A range a-z: both ends plain characters.
        if (ch !== undefined && pattern[j] === '-' && pattern[j + 1] !== undefined && pattern[j + 1] !== ']' && pattern[j + 1] !== '\\') {
          const hi = pattern[j + 1]!;
          cls += `${atom}-${hi}`;
          j += 2;
          if (on) {
            const lo = ch;
            if (isAsciiLetter(lo) && isAsciiLetter(hi) && (lo === lo.toLowerCase()) === (hi === hi.toLowerCase())) {
              extra += `${otherCase(lo)}-${otherCase(hi)}`;
            } else if (/[A-Za-z]/.test(String.fromCharCode(...rangeCodes(lo, hi)))) {
              // A range that mixes letters with other characters (`0-z`, `A-z`): add every letter's other case.
              for (const code of rangeCodes(lo, hi)) {
                const x = String.fromCharCode(code);
                if (isAsciiLetter(x)) extra += otherCase(x);
              }
            }
            if (!isAscii(lo + hi)) return undefined;
          }
          continue;
        }
        cls += atom;
        if (on && ch !== undefined) {
          if (isAsciiLetter(ch)) extra += otherCase(ch);
          else if (!isAscii(ch) && ch.toLowerCase() !== ch.toUpperCase()) return undefined;
        }
      }
      if (j >= n) return undefined; // unterminated class: let the RegExp constructor report it
      out += cls + extra + ']';
      i = j + 1;
      continue;
    }
    if (c === '(') {
      stack.push(on);
      const mod = /^\(\?([ims]*)(?:-([ims]*))?:/.exec(pattern.slice(i));
      if (mod && (mod[1] || mod[2] !== undefined)) {
        if (mod[1]!.includes('i')) on = true;
        if ((mod[2] ?? '').includes('i')) on = false;
        const plus = mod[1]!.replace('i', '');
        const minus = (mod[2] ?? '').replace('i', '');
        out += plus || minus ? `(?${plus}${minus ? `-${minus}` : ''}:` : '(?:';
        i += mod[0].length;
        continue;
      }
      out += c;
      i++;
      continue;
    }
    if (c === ')') {
      on = stack.pop() ?? fold;
      out += c;
      i++;
      continue;
    }
    if (on && isAsciiLetter(c)) out += `[${c}${otherCase(c)}]`;
    else if (on && c.toLowerCase() !== c.toUpperCase()) return undefined;
    else out += c;
    i++;
  }
  return out;
}

function rangeCodes(lo: string, hi: string): number[] {
  const a = lo.charCodeAt(0);
  const b = Math.min(hi.charCodeAt(0), 0x7f);
  const out: number[] = [];
  for (let x = a; x <= b; x++) out.push(x);
  return out;
}

/** V8's linear-time engine takes counted repetitions up to this bound only. */
const MAX_LINEAR_COUNT = 16;

/**
 * Rewrites counted repetitions above MAX_LINEAR_COUNT into a run of smaller
 * ones, which match the same strings: `x{40}` → `x{16}x{16}x{8}`,
 * `x{20,}` → `x{16}x{4,}`, `x{2,40}` → `x{2}x{0,16}x{0,16}x{0,6}`. Only atoms
 * without capturing groups are repeated (copies of a group would renumber
 * the groups after it); a larger count on such a group is left as written
 * and the linear check refuses it.
 */
export function splitCounts(source: string): string {
  let out = '';
  let atomStart = -1; // index in `out` where the last atom begins
  const groupStarts: number[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (c === '\\') {
      atomStart = out.length;
      const named = /^\\(?:k<[^>]*>|[pP]\{[^}]*\}|c[A-Za-z]|x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4})/.exec(source.slice(i));
      const len = named ? named[0].length : 2;
      out += source.slice(i, i + len);
      i += len;
      continue;
    }
    if (c === '[') {
      atomStart = out.length;
      let j = i + 1;
      if (source[j] === '^') j++;
      if (source[j] === ']') j++;
      while (j < source.length && source[j] !== ']') j += source[j] === '\\' ? 2 : 1;
      out += source.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (c === '(') {
      groupStarts.push(out.length);
      out += c;
      i++;
      continue;
    }
    if (c === ')') {
      atomStart = groupStarts.pop() ?? -1;
      out += c;
      i++;
      continue;
    }
    const m = c === '{' ? /^\{(\d+)(,(\d*))?\}/.exec(source.slice(i)) : null;
    if (m && atomStart >= 0) {
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      const atom = out.slice(atomStart);
      const capturing = /\((?!\?)|\(\?<(?![=!])/.test(atom.replace(/\\./g, '').replace(/\[(?:\\.|[^\]])*\]/g, ''));
      const lazy = source[i + m[0].length] === '?';
      if ((min > MAX_LINEAR_COUNT || (max !== Infinity && max > MAX_LINEAR_COUNT)) && !capturing && !lazy && min <= 100_000 && (max === Infinity || max <= 100_000)) {
        const wrapped = atom.length === 1 || atom.startsWith('[') || atom.startsWith('\\') || atom.startsWith('(') ? atom : `(?:${atom})`;
        let rep = '';
        let left = min;
        while (left > MAX_LINEAR_COUNT) {
          rep += `${wrapped}{${MAX_LINEAR_COUNT}}`;
          left -= MAX_LINEAR_COUNT;
        }
        if (max === Infinity) rep += `${wrapped}{${left},}`;
        else {
          if (left > 0) rep += `${wrapped}{${left}}`;
          let opt = max - min;
          while (opt > 0) {
            const k = Math.min(opt, MAX_LINEAR_COUNT);
            rep += `${wrapped}{0,${k}}`;
            opt -= k;
          }
        }
        out = out.slice(0, atomStart) + rep;
        i += m[0].length;
        atomStart = -1;
        continue;
      }
      out += m[0];
      i += m[0].length;
      continue;
    }
    if (c !== '*' && c !== '+' && c !== '?' && c !== '|' && c !== '^' && c !== '$') atomStart = out.length;
    else if (c === '|' || c === '^' || c === '$') atomStart = -1;
    out += c;
    i++;
  }
  return out;
}

/** Why V8's linear-time engine cannot run this pattern; undefined when it can. */
function linearProblem(source: string, flags: string): string | undefined {
  try {
    new RegExp(source, `${flags}l`);
    return undefined;
  } catch (err) {
    const msg = (err as Error).message;
    if (!/linear time/.test(msg)) return msg.replace(/^Invalid regular expression: /, '');
  }
  const found: string[] = [];
  if (/\\[1-9]|\\k</.test(source)) found.push('a backreference');
  if (/\(\?<?[=!]/.test(source)) found.push('a lookahead or lookbehind');
  if (/\\[pP]\{/.test(source) || flags.includes('u')) found.push('a Unicode property escape \\p{…}');
  if (/\(\?(?:[ims]+-?[ims]*|-[ims]+):/.test(source)) found.push('an inline (?m:…) or (?s:…) group');
  if (/\{\d+,?\d*\}/.test(source)) found.push(`a repetition count above ${MAX_LINEAR_COUNT} on a capturing group or a lazy one`);
  const what = found.length > 0 ? found.join(' and ') : 'a construct that needs backtracking';
  return `it uses ${what}, which the linear-time engine does not support`;
}

/**
 * Makes a pattern safe to run, or says why it cannot be: the `i` flag and
 * `(?i:…)` groups are folded by hand (see foldCase), and the result must be
 * one V8's linear-time engine supports. `flags` may hold i, m and s (g, y and
 * d are not for rules; u is refused with \p).
 */
export function makeSafe(source: string, flags = ''): SafeRegexResult {
  try {
    new RegExp(source, flags);
  } catch (err) {
    return { ok: false, kind: 'syntax', reason: (err as Error).message.replace(/^Invalid regular expression: /, '') };
  }
  const folded = foldCase(source, flags.includes('i'));
  if (folded === undefined) return { ok: false, kind: 'linear', reason: 'a case-insensitive pattern may only fold ASCII letters (write the other case of a non-ASCII letter out)' };
  const rest = flags.replace('i', '');
  const split = splitCounts(folded);
  const problem = linearProblem(split, rest);
  if (problem !== undefined) return { ok: false, kind: 'linear', reason: problem };
  return { ok: true, value: { source: split, flags: rest } };
}

/**
 * Compiles a configured pattern so that it cannot stall a match (see the
 * header), or throws an Error that names `what` (the parameter or rule) and
 * the reason.
 */
export function compileSafeRegex(source: string, flags: string, what: string): RegExp {
  const r = makeSafe(source, flags);
  if (!r.ok) {
    const why = r.kind === 'syntax' ? `not a valid regular expression (${r.reason})` : `cannot run in linear time: ${r.reason}`;
    throw new Error(`${what} /${source}/${flags} is ${why}`);
  }
  return new RegExp(r.value.source, r.value.flags);
}

// ---------------------------------------------------------------------------
// The static check behind `config validate`'s warning

/**
 * Finds what makes a backtracking engine slow on a pattern: a quantified
 * group whose body holds another quantifier (`(a+)+`, `(.*)*`, `(a*b?)*`:
 * star height above 1), or a quantified alternation whose branches can start
 * with the same text (`(a|a)*`, `(a|ab)+`). The fallback keeps such a pattern
 * from stalling trawl, but each match that hits it costs 50,000 backtracks
 * before the fallback, so the operator is told. Returns the first finding as
 * one phrase, or undefined. A heuristic: it may miss a slow pattern and may
 * name a harmless one.
 */
export function backtrackingRisk(source: string): string | undefined {
  interface Frame {
    open: number;
    start: number;
    quantified: boolean; // the group's body holds a quantifier
    branches: string[];
    branchStart: number;
  }
  const stack: Frame[] = [{ open: 0, start: 0, quantified: false, branches: [], branchStart: 0 }];
  const isQuant = (k: number): boolean => {
    const q = source[k];
    if (q === '*' || q === '+') return true;
    if (q === '{') return /^\{\d*,?\d*\}/.test(source.slice(k)) && !/^\{(\d+)\}|^\{0*1?,0*1\}/.test(source.slice(k));
    return false;
  };
  const quantLen = (k: number): number => {
    const q = source[k];
    if (q === '{') return /^\{\d*,?\d*\}/.exec(source.slice(k))![0].length;
    return q === '*' || q === '+' || q === '?' ? 1 : 0;
  };
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    const top = stack[stack.length - 1]!;
    if (c === '\\') {
      i += 2;
    } else if (c === '[') {
      i++;
      if (source[i] === '^') i++;
      if (source[i] === ']') i++;
      while (i < source.length && source[i] !== ']') i += source[i] === '\\' ? 2 : 1;
      i++;
    } else if (c === '(') {
      const head = /^\((?:\?(?:[:=!]|<[=!]|<[A-Za-z_]\w*>|[ims]*-?[ims]*:))?/.exec(source.slice(i))![0];
      const open = i;
      i += head.length;
      stack.push({ open, start: i, quantified: false, branches: [], branchStart: i });
      continue;
    } else if (c === '|') {
      top.branches.push(source.slice(top.branchStart, i));
      top.branchStart = i + 1;
      i++;
      continue;
    } else if (c === ')' && stack.length > 1) {
      const g = stack.pop()!;
      g.branches.push(source.slice(g.branchStart, i));
      i++;
      const body = source.slice(g.open, i);
      if (isQuant(i)) {
        if (g.quantified) return `the quantified group ${body} holds another quantifier (nested quantifiers)`;
        const b = g.branches;
        for (let x = 0; x < b.length; x++) {
          for (let y = x + 1; y < b.length; y++) {
            const p = b[x]!;
            const q = b[y]!;
            if (p === q || (p !== '' && q !== '' && (p.startsWith(q) || q.startsWith(p)) && !/[\\[(.]/.test(p + q))) {
              return `the quantified alternation ${body} has branches that match the same text (${p} and ${q})`;
            }
          }
        }
      }
      const parent = stack[stack.length - 1]!;
      if (g.quantified || isQuant(i)) parent.quantified = true;
      i += quantLen(i);
      if (source[i] === '?') i++;
      continue;
    } else {
      i++;
    }
    if (isQuant(i)) stack[stack.length - 1]!.quantified = true;
  }
  return undefined;
}
