// Loopback OIDC provider fixture for Toolgate's Rust integration tests.
//
// Wraps panva's `oidc-provider` (a certified OpenID Provider implementation)
// with: env-driven client registration, an automatic (UI-less) interaction
// handler, and /test/* control endpoints. See README.md.
//
// stdout carries exactly one line: `oidc-provider listening on http://127.0.0.1:PORT`.
// Everything else (oidc-provider notices included) goes to stderr.

import * as crypto from 'node:crypto';
import * as dns from 'node:dns';
import { readFileSync } from 'node:fs';
import * as http from 'node:http';

import Provider, { interactionPolicy } from 'oidc-provider';

// oidc-provider prints its NOTICEs with console.info (stdout). Keep stdout to the
// single readiness line the Rust harness parses.
for (const level of ['log', 'info', 'debug']) {
  console[level] = (...args) => console.error(...args);
}

function fatal(msg) {
  process.stderr.write(`oidc fixture: ${msg}\n`);
  process.exit(2);
}

function csv(value) {
  return (value ?? '').split(',').map((s) => s.trim()).filter(Boolean);
}

// ---------------------------------------------------------------------------
// Configuration from the environment
// ---------------------------------------------------------------------------
const CLIENT_ID = process.env.CLIENT_ID;
const CLIENT_SECRET = process.env.CLIENT_SECRET;
const REDIRECT_URIS = csv(process.env.REDIRECT_URIS);
const POST_LOGOUT_REDIRECT_URIS = csv(process.env.POST_LOGOUT_REDIRECT_URIS);
// Optional: where to POST back-channel logout tokens (OpenID Connect Back-Channel Logout 1.0).
const BACKCHANNEL_LOGOUT_URI = process.env.BACKCHANNEL_LOGOUT_URI || undefined;
// Back-channel requests go to `localhost` names; the gateway under test listens on IPv4 loopback.
dns.setDefaultResultOrder('ipv4first');
if (!CLIENT_ID) fatal('CLIENT_ID is required');
if (!CLIENT_SECRET) fatal('CLIENT_SECRET is required');
if (REDIRECT_URIS.length === 0) fatal('REDIRECT_URIS is required (comma-separated)');

// ---------------------------------------------------------------------------
// Accounts
// ---------------------------------------------------------------------------
const ACCOUNTS = {
  alice: { name: 'Alice Anderson', groups: ['engineering'] },
  bob: { name: 'Bob Brown', groups: ['finance', 'finance-approvers'] },
  carol: { name: 'Carol Clark', groups: ['hr-staff'] },
  dave: { name: 'Dave Davis', groups: [] },
};

async function findAccount(_ctx, id) {
  const account = ACCOUNTS[id];
  if (!account) return undefined;
  return {
    accountId: id,
    // oidc-provider filters these down to what the granted scopes/claims allow.
    async claims(_use, _scope, _claims, _rejected) {
      return {
        sub: id,
        email: `${id}@example.test`,
        email_verified: true,
        name: account.name,
        groups: [...account.groups],
      };
    },
  };
}

// Mutable fixture state, shared by every Provider instance.
const state = {
  nextUser: 'alice',
  ttl: {}, // overrides from POST /test/ttl, in seconds
};

// ---------------------------------------------------------------------------
// Storage: one Map shared by every Provider instance, so that sessions,
// interactions, grants, codes and tokens survive key rotation.
// ---------------------------------------------------------------------------
const store = new Map(); // key -> { payload, expiresAt (ms epoch | undefined) }
const grantIndex = new Map(); // grantId -> Set<key>
const uidIndex = new Map(); // session uid -> key
const userCodeIndex = new Map(); // user code -> key

const GRANTABLE = new Set([
  'AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode',
  'BackchannelAuthenticationRequest', 'PreAuthorizedCode',
]);

function storeGet(key) {
  const entry = store.get(key);
  if (!entry) return undefined;
  if (entry.expiresAt !== undefined && entry.expiresAt <= Date.now()) {
    store.delete(key);
    return undefined;
  }
  return entry.payload;
}

class SharedMapAdapter {
  constructor(model) {
    this.model = model;
  }

  key(id) {
    return `${this.model}:${id}`;
  }

  async upsert(id, payload, expiresIn) {
    const key = this.key(id);
    const expiresAt = typeof expiresIn === 'number' ? Date.now() + expiresIn * 1000 : undefined;
    store.set(key, { payload: structuredClone(payload), expiresAt });
    if (this.model === 'Session' && payload.uid) uidIndex.set(payload.uid, key);
    if (payload.userCode) userCodeIndex.set(payload.userCode, key);
    if (GRANTABLE.has(this.model) && payload.grantId) {
      if (!grantIndex.has(payload.grantId)) grantIndex.set(payload.grantId, new Set());
      grantIndex.get(payload.grantId).add(key);
    }
  }

  async find(id) {
    const payload = storeGet(this.key(id));
    return payload === undefined ? undefined : structuredClone(payload);
  }

  async findByUid(uid) {
    const key = uidIndex.get(uid);
    const payload = key && storeGet(key);
    return payload ? structuredClone(payload) : undefined;
  }

  async findByUserCode(userCode) {
    const key = userCodeIndex.get(userCode);
    const payload = key && storeGet(key);
    return payload ? structuredClone(payload) : undefined;
  }

  async consume(id) {
    const payload = storeGet(this.key(id));
    if (payload) payload.consumed = Math.floor(Date.now() / 1000);
  }

  async destroy(id) {
    const key = this.key(id);
    const payload = storeGet(key);
    store.delete(key);
    if (payload?.uid && uidIndex.get(payload.uid) === key) uidIndex.delete(payload.uid);
    if (payload?.userCode && userCodeIndex.get(payload.userCode) === key) {
      userCodeIndex.delete(payload.userCode);
    }
  }

  async revokeByGrantId(grantId) {
    for (const key of grantIndex.get(grantId) ?? []) store.delete(key);
    grantIndex.delete(grantId);
  }
}

// Drop expired entries now and then so long test runs do not grow unbounded.
setInterval(() => {
  const now = Date.now();
  for (const [key, entry] of store) {
    if (entry.expiresAt !== undefined && entry.expiresAt <= now) store.delete(key);
  }
}, 60_000).unref();

// ---------------------------------------------------------------------------
// Signing keys
// ---------------------------------------------------------------------------
let keyCounter = 0;
function newKid(prefix) {
  keyCounter += 1;
  return `${prefix}-${keyCounter}-${crypto.randomBytes(4).toString('hex')}`;
}

function generateEcKey() {
  const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { ...privateKey.export({ format: 'jwk' }), kid: newKid('es256'), alg: 'ES256', use: 'sig' };
}

function generateRsaKey() {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: newKid('rs256'), alg: 'RS256', use: 'sig' };
}

// Newest EC key first: oidc-provider signs with the first key matching the alg.
let ecKeys = [generateEcKey()];
const rsaKey = generateRsaKey();
const currentJwks = () => ({ keys: [...ecKeys, rsaKey] });

// Cookie signing keys are fixed for the process so cookies stay valid across
// Provider re-creation.
const COOKIE_KEYS = [crypto.randomBytes(32).toString('base64url')];

// ---------------------------------------------------------------------------
// Provider construction
// ---------------------------------------------------------------------------
const DEFAULT_TTL = {
  AccessToken: 60 * 60,
  AuthorizationCode: 60,
  IdToken: 60 * 60,
  RefreshToken: 14 * 24 * 60 * 60,
  Interaction: 60 * 60,
  Session: 14 * 24 * 60 * 60,
  Grant: 14 * 24 * 60 * 60,
};
const ttlFor = (name) => () => state.ttl[name] ?? DEFAULT_TTL[name];

function buildPolicy() {
  const policy = interactionPolicy.base();
  // Re-authenticate when the test selected a different user than the one the
  // browser session (cookie jar) is signed in as.
  policy.get('login').checks.add(new interactionPolicy.Check(
    'test_next_user_changed',
    'the test selected a different End-User',
    (ctx) => {
      const { accountId } = ctx.oidc.session;
      if (accountId && accountId !== state.nextUser) {
        return interactionPolicy.Check.REQUEST_PROMPT;
      }
      return interactionPolicy.Check.NO_NEED_TO_PROMPT;
    },
  ));
  return policy;
}

function buildConfiguration() {
  return {
    adapter: SharedMapAdapter,
    clients: [{
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      redirect_uris: REDIRECT_URIS,
      post_logout_redirect_uris: POST_LOGOUT_REDIRECT_URIS,
      ...(BACKCHANNEL_LOGOUT_URI
        ? { backchannel_logout_uri: BACKCHANNEL_LOGOUT_URI, backchannel_logout_session_required: true }
        : {}),
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'ES256',
    }],
    jwks: currentJwks(),
    findAccount,
    cookies: { keys: COOKIE_KEYS },
    responseTypes: ['code'],
    scopes: ['openid', 'offline_access', 'email', 'profile', 'groups'],
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name'],
      groups: ['groups'],
    },
    // Put the claims of every granted scope into the ID token.
    conformIdTokenClaims: false,
    pkce: { required: () => true }, // only S256 is supported by oidc-provider 9
    issueRefreshToken: async () => true,
    rotateRefreshToken: () => true,
    clientBasedCORS: (_ctx, origin, client) => client.redirectUris
      .some((uri) => URL.parse(uri)?.origin === origin),
    enabledJWA: { idTokenSigningAlgValues: ['ES256', 'RS256'] },
    ttl: Object.fromEntries(Object.keys(DEFAULT_TTL).map((k) => [k, ttlFor(k)])),
    interactions: {
      policy: buildPolicy(),
      url: (_ctx, interaction) => `/interaction/${interaction.uid}`,
    },
    features: {
      devInteractions: { enabled: false },
      revocation: { enabled: true, allowedPolicy: async () => true },
      backchannelLogout: { enabled: true },
      introspection: { enabled: false },
      rpInitiatedLogout: {
        enabled: true,
        // The confirm form: POST xsrf + logout=yes to /session/end/confirm.
        logoutSource: async (ctx, form) => {
          ctx.type = 'html';
          ctx.body = `<!DOCTYPE html><html><body>${form}<button type="submit" form="op.logoutForm" name="logout" value="yes">Sign out</button></body></html>`;
        },
        postLogoutSuccessSource: async (ctx) => {
          ctx.type = 'text';
          ctx.body = 'signed out';
        },
      },
      // Default behaviour (no `resource` parameter => opaque access token for
      // the userinfo endpoint). A `resource` parameter, if a test sends one,
      // yields a JWT access token for that audience.
      resourceIndicators: {
        enabled: true,
        getResourceServerInfo: async (_ctx, resourceIndicator) => ({
          scope: 'api',
          audience: resourceIndicator,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        }),
      },
    },
    // Outgoing requests (back-channel logout tokens) go to the gateway under test on loopback,
    // which oidc-provider's SSRF guard refuses by default: this fixture only ever talks to
    // loopback, so the guard's dispatcher is dropped.
    fetch: (url, options) => {
      const { dispatcher: _loopbackRefused, ...rest } = options;
      return globalThis.fetch(url, rest);
    },
    // Machine-readable errors for pages that cannot redirect back to the client.
    renderError: async (ctx, out, _error) => {
      ctx.type = 'json';
      ctx.body = out;
    },
  };
}

// Automatic interaction: log in `state.nextUser`, then grant everything asked.
async function interactionMiddleware(ctx, next) {
  const match = /^\/interaction\/([^/]+)$/.exec(ctx.path);
  if (!match || !['GET', 'POST'].includes(ctx.method)) {
    await next();
    return;
  }
  const provider = ctx.app;
  let details;
  try {
    details = await provider.interactionDetails(ctx.req, ctx.res);
  } catch (err) {
    ctx.status = 400;
    ctx.type = 'json';
    ctx.body = { error: 'interaction_not_found', error_description: String(err?.message ?? err) };
    return;
  }
  const { prompt, params, session } = details;
  let result;
  let merge = true;
  let afterResult;
  if (prompt.name === 'login') {
    result = { login: { accountId: state.nextUser } };
    merge = false;
    const previous = session?.uid ? await provider.Session.findByUid(session.uid) : undefined;
    if (previous?.accountId && previous.accountId !== state.nextUser) {
      // Switching End-User within one browser session. oidc-provider would answer
      // the resume with an auto-submitting (JavaScript) form that logs the old
      // user out first; a test HTTP client cannot run it. Do that logout here
      // instead (revoke the old session's grants and destroy it, as
      // end_session with logout=yes does) so the chain stays redirect-only.
      afterResult = async () => {
        for (const { grantId } of Object.values(previous.authorizations ?? {})) {
          if (!grantId) continue;
          await Promise.all([provider.AccessToken, provider.RefreshToken, provider.AuthorizationCode]
            .map((model) => model.revokeByGrantId(grantId)));
          await provider.Grant.adapter.destroy(grantId);
        }
        await previous.destroy();
        const interaction = await provider.Interaction.find(details.uid);
        delete interaction.session;
        await interaction.save(interaction.exp - Math.floor(Date.now() / 1000));
      };
    }
  } else if (prompt.name === 'consent') {
    const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = prompt.details;
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(' '));
    if (missingOIDCClaims) grant.addOIDCClaims(missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    result = { consent: { grantId: await grant.save() } };
  } else {
    result = { error: 'access_denied', error_description: `unsupported prompt ${prompt.name}` };
  }
  const returnTo = await provider.interactionResult(ctx.req, ctx.res, result, {
    mergeWithLastSubmission: merge,
  });
  await afterResult?.();
  ctx.status = 303;
  ctx.redirect(returnTo);
}

let issuer;
let provider; // { instance, handler } of the current Provider

function createProvider() {
  const instance = new Provider(issuer, buildConfiguration());
  instance.use(interactionMiddleware);
  instance.on('server_error', (_ctx, err) => console.error('oidc-provider server_error:', err));
  instance.on('backchannel.error', (_ctx, err) => console.error('oidc-provider backchannel.error:', err));
  return { instance, handler: instance.callback() };
}

// ---------------------------------------------------------------------------
// Test-control endpoints
// ---------------------------------------------------------------------------
function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const kids = () => currentJwks().keys.map((k) => k.kid);

async function handleControl(req, res, path) {
  const route = `${req.method} ${path}`;
  switch (route) {
    case 'GET /test/health':
      return sendJson(res, 200, { ok: true, issuer, nextUser: state.nextUser, kids: kids() });
    case 'POST /test/next-user': {
      const user = (await readBody(req)).trim();
      if (!Object.hasOwn(ACCOUNTS, user)) {
        return sendJson(res, 400, { error: `unknown user ${JSON.stringify(user)}`, users: Object.keys(ACCOUNTS) });
      }
      state.nextUser = user;
      return sendJson(res, 200, { nextUser: user });
    }
    case 'POST /test/rotate-keys': {
      ecKeys = [generateEcKey(), ...ecKeys];
      provider = createProvider();
      return sendJson(res, 200, { signingKid: ecKeys[0].kid, kids: kids() });
    }
    case 'POST /test/drop-old-keys': {
      ecKeys = ecKeys.slice(0, 1);
      provider = createProvider();
      return sendJson(res, 200, { signingKid: ecKeys[0].kid, kids: kids() });
    }
    case 'POST /test/ttl': {
      let body;
      try {
        body = JSON.parse((await readBody(req)) || '{}');
      } catch {
        return sendJson(res, 400, { error: 'body must be JSON' });
      }
      if (body === null || typeof body !== 'object' || Array.isArray(body)) {
        return sendJson(res, 400, { error: 'body must be a JSON object' });
      }
      for (const [name, value] of Object.entries(body)) {
        if (!Object.hasOwn(DEFAULT_TTL, name)) {
          return sendJson(res, 400, { error: `unknown ttl ${name}`, known: Object.keys(DEFAULT_TTL) });
        }
        if (value !== null && !(Number.isInteger(value) && value > 0)) {
          return sendJson(res, 400, { error: `ttl ${name} must be a positive integer or null` });
        }
      }
      for (const [name, value] of Object.entries(body)) {
        if (value === null) delete state.ttl[name];
        else state.ttl[name] = value;
      }
      return sendJson(res, 200, {
        ttl: Object.fromEntries(Object.keys(DEFAULT_TTL).map((k) => [k, ttlFor(k)()])),
      });
    }
    default:
      return sendJson(res, 404, { error: `no control endpoint ${route}` });
  }
}

function isLoopback(addr) {
  return addr === '127.0.0.1' || addr === '::1' || addr === '::ffff:127.0.0.1'
    || (typeof addr === 'string' && (addr.startsWith('127.') || addr.startsWith('::ffff:127.')));
}

// ---------------------------------------------------------------------------
// HTTP server
// ---------------------------------------------------------------------------
const server = http.createServer((req, res) => {
  if (!isLoopback(req.socket.remoteAddress)) {
    res.writeHead(403).end();
    return;
  }
  const path = (req.url ?? '/').split('?')[0];
  if (path.startsWith('/test/')) {
    handleControl(req, res, path).catch((err) => {
      console.error('control endpoint error:', err);
      if (!res.headersSent) sendJson(res, 500, { error: String(err?.message ?? err) });
    });
    return;
  }
  if (!provider) {
    res.writeHead(503).end();
    return;
  }
  // Each request is bound to the Provider current at its arrival; a rotation
  // swaps `provider` for later requests while this one completes on the old
  // instance (which shares storage and cookie keys with the new one).
  provider.handler(req, res);
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  issuer = `http://127.0.0.1:${port}`;
  provider = createProvider();
  process.stdout.write(`oidc-provider listening on ${issuer}\n`);
});

// Shut down on signals, and when the parent process (the test) goes away.
for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  process.on(sig, () => process.exit(0));
}
// (process.ppid is captured at start-up in Node, so read the live value.)
const parentPid = process.ppid;
function parentGone() {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return ppid !== parentPid;
  } catch {
    try {
      process.kill(parentPid, 0);
      return false;
    } catch (err) {
      return err.code === 'ESRCH';
    }
  }
}
setInterval(() => {
  if (parentGone()) process.exit(0);
}, 500).unref();
