// The share link's place in a URL: the fragment "#cluster=<payload>", where
// the payload is core/snapshot's "1.<base64url>" (never sent to a server:
// browsers keep the fragment to themselves).

export const LINK_KEY = 'cluster';

/** linkPayload is what follows #cluster= in a location.hash, or null. */
export function linkPayload(hash) {
  const m = /^#cluster=([A-Za-z0-9._-]*)$/.exec(hash || '');
  return m ? m[1] : null;
}

/** linkURL is href with its fragment replaced by the link's. */
export function linkURL(href, payload) {
  const url = new URL(href);
  url.hash = `${LINK_KEY}=${payload}`;
  return url.href;
}
