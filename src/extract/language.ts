/**
 * The language of a document, for the `focused` section (MS-FSCCFG
 * 2.2.4.19, ISO 639-1 codes): the document's own declaration first
 * (`<html lang>`, then Content-Language), else a statistical guess from its
 * text with franc-min (82 languages, trigram profiles), mapped from ISO
 * 639-3 to 639-1. Undefined when there is too little text to tell.
 */

import { franc } from 'franc-min';
import { iso6393To1 } from 'iso-639-3';

/** "en-US" → "en"; undefined when it is not a language tag. */
export function primaryLanguage(tag: string | undefined): string | undefined {
  const m = /^\s*([A-Za-z]{2,3})(?:[-_][A-Za-z0-9]+)*\s*(?:,|$)/.exec(tag ?? '');
  if (!m) return undefined;
  const code = m[1]!.toLowerCase();
  return code.length === 2 ? code : iso6393To1[code];
}

/** Visible text of an HTML document, roughly: scripts, styles and tags removed, the first `maxChars`. */
export function htmlText(html: string, maxChars = 20_000): string {
  return html
    .slice(0, maxChars * 4)
    .replace(/<(script|style|noscript)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(?:nbsp|amp|lt|gt|quot|#\d+|#x[0-9a-f]+);/gi, ' ')
    .replace(/\s+/g, ' ')
    .slice(0, maxChars)
    .trim();
}

export function detectLanguage(doc: { lang?: string | undefined; contentLanguage?: string | undefined; text: string }): string | undefined {
  const declared = primaryLanguage(doc.lang) ?? primaryLanguage(doc.contentLanguage);
  if (declared) return declared;
  const guess = franc(doc.text, { minLength: 40 });
  return guess === 'und' ? undefined : iso6393To1[guess];
}
