/**
 * Canonical hashing for cache keys and input hashes: RFC 8785 JSON canonicalisation (the
 * `canonicalize` package, why: a standard, well-kept implementation instead of our own key sorter)
 * followed by SHA-256.
 */
import { createHash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';

const canonicalizeFn = canonicalizeModule as unknown as (value: unknown) => string | undefined;

/**
 * Canonical JSON text of `value` (sorted keys, no whitespace, RFC 8785 numbers).
 * `undefined` properties are dropped as in JSON.stringify.
 * @throws TypeError when `value` is not JSON-serialisable (a function, a BigInt, a cycle)
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalizeFn(value);
  if (text === undefined) throw new TypeError('value is not JSON-serialisable');
  return text;
}

/** SHA-256 hex digest (64 lowercase hex characters) of a string or bytes. */
export function sha256(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** SHA-256 hex of the canonical JSON of `value`: the input hash and cache key of the project. */
export function hashJson(value: unknown): string {
  return sha256(canonicalJson(value));
}
