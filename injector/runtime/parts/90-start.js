// 90-start.js — start-up and the gateway round trip.
//
// Owns installing `window.__toolgate__`, the WebMCP polyfills and `window.__ci4a__`; the one
// MutationObserver whose records every dialect reads; the first scan (once the document is
// parsed); and the conversation with the gateway: GET the session once, POST the catalog (names,
// descriptions, schemas, sources — never context text) and re-POST, debounced, whenever it
// changes. A failed or pending round trip leaves everything hidden.

// ---- the gateway round trip ---------------------------------------------------------------------

let roundTrips = 0;
let postTimer = null;
let posting = false;
let postAgain = false;
let failedPosts = 0;
let lastDecidedBody = null; // the last body the gateway answered

// Taken before any page script runs, so a page that replaces fetch or Response.prototype.json cannot
// answer for the gateway. (The runtime's hiding is for the user; the gateway enforces.)
const gatewayFetch = window.fetch.bind(window);
const readJson = Response.prototype.json;

async function fetchJson(url, init) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), FETCH_TIMEOUT_MS);
  try {
    const response = await gatewayFetch(url, {
      credentials: 'same-origin',
      cache: 'no-store',
      redirect: 'error',
      signal: controller.signal,
      ...init,
    });
    if (!response.ok) {
      throw new Error(`${url} answered ${response.status}`);
    }
    return await readJson.call(response);
  } finally {
    clearTimeout(timer);
  }
}

async function fetchSession() {
  try {
    const answer = await fetchJson(SESSION_URL, { method: 'GET' });
    if (!answer || typeof answer.csrf !== 'string' || !answer.user) {
      throw new Error('the session answer has no csrf token or user');
    }
    core.session = jsonClone({ user: answer.user, site: answer.site, page_tools: answer.page_tools !== false });
    core.continuation = answer.continuation ? jsonClone(answer.continuation) : null;
    core.csrf = answer.csrf;
    core.limits = { ...DEFAULT_LIMITS, ...(answer.limits || {}) };
    core.sessionState = answer.page_tools === false ? 'off' : 'ok';
  } catch (error) {
    warn('no agent session; every tool stays hidden', String(error && error.message));
    core.sessionState = 'failed';
  }
  schedulePost();
  changed();
  maybeReady();
}

function schedulePost() {
  if (core.sessionState !== 'ok' || !core.scanned) {
    return;
  }
  clearTimeout(postTimer);
  postTimer = setTimeout(postCatalog, roundTrips === 0 ? 0 : POST_DEBOUNCE_MS);
}

/** The POST body within the session's limits; what does not fit is marked `over_limit`. */
function catalogBody() {
  const encoder = new TextEncoder();
  let bytes = 64;
  const overLimit = new Set();
  const fits = (kind, entry, item, count, max) => {
    const size = encoder.encode(JSON.stringify(item)).length + 1;
    if (count >= max || bytes + size > core.limits.catalog_bytes) {
      overLimit.add(`${kind}:${entry.name}`);
      return false;
    }
    bytes += size;
    return true;
  };
  const tools = [];
  const fingerprints = new Map();
  for (const entry of core.tools) {
    const item = reportTool(entry);
    if (encoder.encode(item.description).length > MAX_DESCRIPTION_BYTES) {
      overLimit.add(`tool:${entry.name}`);
    } else if (fits('tool', entry, item, tools.length, core.limits.tools)) {
      tools.push(item);
      fingerprints.set(`tool:${entry.name}`, entry.fingerprint);
    }
  }
  const contexts = [];
  for (const entry of core.contexts) {
    const item = { name: entry.name, source: entry.raw.source };
    if (fits('context', entry, item, contexts.length, core.limits.contexts)) {
      contexts.push(item);
      fingerprints.set(`context:${entry.name}`, entry.fingerprint);
    }
  }
  return { body: { tools, contexts }, fingerprints, overLimit };
}

async function postCatalog() {
  if (posting) {
    postAgain = true;
    return;
  }
  const { body, fingerprints, overLimit } = catalogBody();
  const text = JSON.stringify(body);
  core.overLimit = overLimit;
  // A rescan that changed nothing the gateway decides on (a context's text, say) needs no POST.
  if (text === lastDecidedBody) {
    changed();
    return;
  }
  posting = true;
  try {
    const answer = await fetchJson(CATALOG_URL, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Toolgate-CSRF': core.csrf },
      body: text,
    });
    for (const kind of ['tool', 'context']) {
      for (const item of (answer && answer[`${kind}s`]) || []) {
        const key = `${kind}:${item && item.name}`;
        if (fingerprints.has(key)) {
          core.decisions.set(key, {
            fingerprint: fingerprints.get(key),
            decision: String(item.decision),
            reason: typeof item.reason === 'string' ? item.reason : undefined,
          });
        }
      }
    }
    failedPosts = 0;
    lastDecidedBody = text;
  } catch (error) {
    // Fail closed: what was posted stays hidden (pending) until a later POST succeeds.
    warn('the gateway did not decide the catalog', String(error && error.message));
    if (failedPosts < RETRY_DELAYS_MS.length) {
      setTimeout(schedulePost, RETRY_DELAYS_MS[failedPosts]);
    }
    failedPosts += 1;
  }
  posting = false;
  roundTrips += 1;
  if (postAgain) {
    postAgain = false;
    schedulePost();
  }
  changed();
  maybeReady();
}

// ---- start ----------------------------------------------------------------------------------------

const api = Object.freeze({
  version: VERSION,
  ready: ready.then(() => undefined),
  session: () => (core.session ? jsonClone(core.session) : null),
  catalog,
  hidden,
  call: (name, args, options) => callTool(name, args, options),
  subscribe,
});

function observeDocument() {
  const observer = new MutationObserver((records) => {
    for (const handler of mutationHandlers) {
      try {
        handler(records);
      } catch (error) {
        warn('a mutation handler failed', String(error && error.message));
      }
    }
  });
  observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
}

function firstScan() {
  core.started = true;
  observeDocument();
  rescan();
  maybeReady();
}

Object.defineProperty(window, '__toolgate__', {
  value: api,
  writable: false,
  configurable: false,
  enumerable: false,
});
installModelContexts();
installComponentRegistry();
fetchSession();
if (document.readyState === 'loading') {
  document.addEventListener('DOMContentLoaded', firstScan, { once: true });
} else {
  firstScan();
}
document.documentElement.setAttribute('data-toolgate-runtime', 'ready');
