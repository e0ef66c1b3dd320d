// The Hugging Face token a user gave the repo view: kept in sessionStorage (this tab only), one
// per endpoint origin, and sent only to that origin, so a gated file opened from the repo view
// opens in the normal view too.

/** @param {string} origin */
export const tokenKey = (origin) => `gguf-lens-hub-token ${origin}`;

/**
 * Headers for reading `url`: `Authorization: Bearer …` when a token is stored for its origin.
 * @param {string} url an absolute http(s) URL
 * @returns {Record<string, string> | undefined}
 */
export function hubHeadersFor(url) {
  let token = '';
  let u;
  try { u = new URL(url); } catch { return undefined; }
  // Never in clear to another machine (the repo view keeps only such endpoints' tokens anyway).
  const loopback = /^(localhost|\[::1\]|127\.\d+\.\d+\.\d+)$/i.test(u.hostname);
  if (u.protocol !== 'https:' && !(u.protocol === 'http:' && loopback)) return undefined;
  try { token = sessionStorage.getItem(tokenKey(u.origin)) || ''; } catch { /* storage blocked */ }
  return token ? { Authorization: `Bearer ${token}` } : undefined;
}
