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
  try { token = sessionStorage.getItem(tokenKey(new URL(url).origin)) || ''; } catch { /* storage blocked */ }
  return token ? { Authorization: `Bearer ${token}` } : undefined;
}
