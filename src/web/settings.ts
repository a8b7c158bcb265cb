// The operator's web settings as the web tools receive them (built from the config in src/pipeline/service.ts limitsOf).
import { EMPTY_ALLOW_LIST, type AllowList } from './address-policy.js';
import type { Resolver } from './fetch.js';
import type { SearchProvider, SearchSettings } from './search.js';

export interface WebSettings {
  /** TOOLGATE_WEB_ALLOW: hosts and ranges reachable although private or loopback. */
  allow: AllowList;
  search: SearchSettings;
  /** Largest response body (TOOLGATE_WEB_MAX_BYTES); a call's max_bytes may only lower it. */
  maxBytes: number;
  /** Time for one fetch or search, redirects included (TOOLGATE_WEB_TIMEOUT_MS). */
  timeoutMs: number;
  maxRedirects: number;
  /** Where host names are resolved; the system resolver when absent (tests give their own). */
  lookup?: Resolver | undefined;
}

/** Redirects followed by web_fetch and web_search (docs/web.md: at most five). */
export const WEB_MAX_REDIRECTS = 5;

/** For workspaces opened without a config (tests of other layers): nothing allowed, DuckDuckGo, modest bounds. */
export const DEFAULT_WEB_SETTINGS: WebSettings = {
  allow: EMPTY_ALLOW_LIST,
  search: { provider: 'duckduckgo' },
  maxBytes: 5 * 1024 * 1024,
  timeoutMs: 15_000,
  maxRedirects: WEB_MAX_REDIRECTS,
};

/** The TOOLGATE_WEB_* values of a validated config: what web/ reads of src/config.ts, which sits above it. */
export interface WebConfig {
  webAllow?: AllowList | undefined;
  webSearchProvider: SearchProvider;
  webSearchUrl?: string | undefined;
  webSearchKey?: string | undefined;
  webMaxBytes: number;
  webTimeoutMs: number;
}

/** The web settings of a validated config (TOOLGATE_WEB_*). */
export function webSettingsOf(config: WebConfig): WebSettings {
  return {
    allow: config.webAllow ?? EMPTY_ALLOW_LIST,
    search: { provider: config.webSearchProvider, url: config.webSearchUrl, key: config.webSearchKey },
    maxBytes: config.webMaxBytes,
    timeoutMs: config.webTimeoutMs,
    maxRedirects: WEB_MAX_REDIRECTS,
  };
}
