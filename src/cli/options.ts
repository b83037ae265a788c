import { TrawlError } from '../core/errors.ts';

/** A whole-number option, or a usage error that names the flag. */
export function wholeNumberOption(flag: string, text: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new TrawlError('TRAWL_ERR_USAGE', `${flag} must be a whole number ${max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`}, not ${JSON.stringify(text)}`);
  }
  return n;
}
