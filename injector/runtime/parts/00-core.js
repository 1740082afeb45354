// 00-core.js — the catalog and the gateway round trip.
//
// Owns: the one live catalog merged from every dialect (providers), tool/context name validation
// and deterministic clash suffixes, the session fetch and the catalog POST to the gateway (fail
// closed: nothing is visible until the gateway said so for exactly this definition), the
// `window.__toolgate__` API object and `callTool`, the single entry point every caller (the API,
// the WebMCP polyfills, a native browser agent) goes through: visibility, disabled, argument
// validation, timeout — in that order, before any page code runs.
//
// The gateway round trip (session, catalog POST) lives in 90-start.js.
//
// Parts share one function scope; this part defines what the others use:
//   addProvider({collect}) — collect() returns {tools: [RawTool], contexts: [RawContext]}
//     RawTool:    {key, name, title?, description, input_schema, annotations, source,
//                  isDisabled?(), invoke(args, {signal}) -> result | Promise<result>,
//                  readResult?(result) -> JSON, resultText?(result) -> string | null}
//     (readResult: the call's JSON result, default a JSON copy; resultText: the result as
//     WebMCP's executeTool() gives it to a page, default webmcpText in 30-webmcp.js)
//     RawContext: {key, name, source, read() -> string}
//   scheduleRescan(), onMutations(handler), onCatalogChange(hook), visibleTools(),
//   callTool(name, args, options), ToolCallError, jsonClone, reportTool(entry).
// callTool's options: {timeoutMs, signal, callId, approvalToken, text}; callId and
// approvalToken mark a form tool's submission for the proxy (its approval check, and the site's
// answer: see 45-forms-execute.js); `text: true` adds `text` (resultText) to a successful
// outcome.

// The script may end up on a page twice (a page that copies its own <head> into an iframe srcdoc,
// a cached fragment re-inserted by a framework); the second run must be a no-op.
if (Object.prototype.hasOwnProperty.call(window, '__toolgate__')) {
  return;
}

const VERSION = 2;
const NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;
const MAX_NAME_LENGTH = 128;
const SESSION_URL = '/.toolgate/agent/session';
const LOGOUT_URL = '/.toolgate/logout';
const CATALOG_URL = '/.toolgate/agent/catalog';
const POST_DEBOUNCE_MS = 150;
const FETCH_TIMEOUT_MS = 10000;
const RETRY_DELAYS_MS = [1000, 3000, 10000];
// The gateway refuses a whole report with a longer description; such a tool is left out instead.
const MAX_DESCRIPTION_BYTES = 8192;
const DEFAULT_LIMITS = { catalog_bytes: 262144, tools: 256, contexts: 128, call_timeout_ms: 30000 };
const NO_ANNOTATIONS = Object.freeze({ read_only: false, consequential: false, untrusted_content: false });

/** An error with a catalog error code (`cancelled`, `disabled`, `page_error`...). */
class ToolCallError extends Error {
  constructor(code, message, details) {
    super(message);
    this.code = code;
    this.details = details;
  }
}

const providers = [];
const mutationHandlers = [];
const catalogHooks = [];
const subscribers = new Set();

const core = {
  started: false,
  scanned: false,
  session: null, // {user, site, page_tools} once fetched
  continuation: null, // {tool, outcome}: a turn the previous page's form submission took here
  csrf: null,
  limits: DEFAULT_LIMITS,
  // 'pending' until the session answered; then 'ok', 'off' (page_tools false) or 'failed'.
  sessionState: 'pending',
  tools: [], // [{raw, name, fingerprint}] in discovery order
  contexts: [], // [{raw, name, fingerprint}]
  overLimit: new Set(), // 'tool:NAME' / 'context:NAME' left out of the POST by the limits
  decisions: new Map(), // 'tool:NAME' -> {fingerprint, decision, reason}
  names: { tool: new Map(), context: new Map() }, // raw.key -> {base, name}
  lastSignature: '',
};

let resolveReady;
const ready = new Promise((resolve) => {
  resolveReady = resolve;
});

function addProvider(provider) {
  providers.push(provider);
}

function onMutations(handler) {
  mutationHandlers.push(handler);
}

function onCatalogChange(hook) {
  catalogHooks.push(hook);
}

/** A JSON copy of `value`; throws on cycles, BigInts and the like. `undefined` becomes null. */
function jsonClone(value) {
  const text = JSON.stringify(value);
  return text === undefined ? null : JSON.parse(text);
}

function warn(message, detail) {
  // Never page text or arguments: names and error messages only.
  console.warn(`[toolgate] ${message}`, detail === undefined ? '' : detail);
}

// ---- scanning and naming ----------------------------------------------------------------------

let rescanQueued = false;

/** Rebuilds the catalog soon (coalesced); dialects call it whenever something may have changed. */
function scheduleRescan() {
  if (!core.started || rescanQueued) {
    return;
  }
  rescanQueued = true;
  setTimeout(rescan, 0);
}

function rescan() {
  rescanQueued = false;
  const rawTools = [];
  const rawContexts = [];
  for (const provider of providers) {
    try {
      const found = provider.collect();
      rawTools.push(...(found.tools || []));
      rawContexts.push(...(found.contexts || []));
    } catch (error) {
      warn('a tool provider failed', String(error && error.message));
    }
  }
  core.tools = assignNames(rawTools, core.names.tool).map(({ raw, name }) => ({
    raw,
    name,
    fingerprint: JSON.stringify(describeTool(raw, name)),
  }));
  core.contexts = assignNames(rawContexts, core.names.context).map(({ raw, name }) => ({
    raw,
    name,
    fingerprint: JSON.stringify({ name, source: raw.source }),
  }));
  core.scanned = true;
  schedulePost();
  changed();
}

/**
 * Gives every valid entry its final name. An entry keeps the name it already had while its own
 * name is unchanged (so a tool added later never renames an existing one); new entries take their
 * name, or the first free `name_2`, `name_3`, … in discovery order.
 */
function assignNames(raws, previous) {
  const valid = raws.filter((raw) => typeof raw.name === 'string' && NAME_PATTERN.test(raw.name));
  const next = new Map();
  const taken = new Set();
  for (const raw of valid) {
    const old = previous.get(raw.key);
    if (old && old.base === raw.name && !taken.has(old.name) && !next.has(raw.key)) {
      taken.add(old.name);
      next.set(raw.key, old);
    }
  }
  for (const raw of valid) {
    if (next.has(raw.key)) {
      continue;
    }
    let name = raw.name;
    for (let counter = 2; taken.has(name); counter += 1) {
      const suffix = `_${counter}`;
      name = raw.name.slice(0, MAX_NAME_LENGTH - suffix.length) + suffix;
    }
    taken.add(name);
    next.set(raw.key, { base: raw.name, name });
  }
  previous.clear();
  for (const [key, value] of next) {
    previous.set(key, value);
  }
  const seen = new Set();
  return valid
    .filter((raw) => !seen.has(raw.key) && seen.add(raw.key))
    .map((raw) => ({ raw, name: next.get(raw.key).name }));
}

/** The catalog (and POST) form of a tool. */
function describeTool(raw, name) {
  const tool = { name };
  if (typeof raw.title === 'string' && raw.title !== '') {
    tool.title = raw.title;
  }
  tool.description = typeof raw.description === 'string' ? raw.description : '';
  tool.input_schema = raw.input_schema;
  tool.annotations = { ...NO_ANNOTATIONS, ...(raw.annotations || {}) };
  tool.source = raw.source;
  return tool;
}

// A control named "method", "action" or "elements" shadows the form's own member, so these are
// always read from the prototype (taken before page scripts run).
const FormElement = HTMLFormElement;
const [formMethodOf, formActionOf, formElementsOf] = ['method', 'action', 'elements']
  .map((member) => Object.getOwnPropertyDescriptor(HTMLFormElement.prototype, member).get);

/**
 * The form a form tool submits, as the gateway guards it: `{method, action}` with the effective
 * method (a `_method` field overrides it, as frameworks read it) and the action's path; null for
 * other tools, dialog forms and actions on another origin (the gateway cannot guard those).
 */
function formTarget(raw) {
  const form = raw && raw.key;
  if (!(form instanceof FormElement)) {
    return null;
  }
  let method = String(formMethodOf.call(form)).toUpperCase();
  if (method === 'DIALOG') {
    return null;
  }
  for (const control of Array.from(formElementsOf.call(form))) {
    if (typeof control.name === 'string' && control.name.trim().toLowerCase() === '_method'
      && typeof control.value === 'string' && control.value.trim() !== '') {
      method = control.value.trim().toUpperCase();
    }
  }
  let url;
  try {
    url = new URL(formActionOf.call(form), location.href);
  } catch (error) {
    return null;
  }
  return url.origin === location.origin ? { method, action: url.pathname } : null;
}

/** A tool as reported to the gateway (catalog POST, turns): a form tool adds the form it submits. */
function reportTool(entry) {
  const tool = describeTool(entry.raw, entry.name);
  const form = formTarget(entry.raw);
  if (form) {
    tool.form = form;
  }
  return tool;
}

/**
 * The mark an agent's submission of this tool's form carries (`{callId, token?, gated}`, see
 * 45-forms-execute.js), or null for a tool that is not a form. Every call of a form tool is
 * marked, so the gateway can watch the site's answer (`__toolgate__.call` then gets it). An
 * approved call carries its token; a call of a form tool the gateway said needs approval is
 * `gated`: its submission carries the call in hidden fields, and without a token the proxy
 * refuses it.
 */
function submissionMark(entry, settings) {
  if (!(entry.raw.key instanceof FormElement)) {
    return null;
  }
  const token = typeof settings.approvalToken === 'string' ? settings.approvalToken : null;
  const decision = core.decisions.get(`tool:${entry.name}`);
  const gated = token !== null || Boolean(decision && decision.decision === 'ask_approval');
  const callId = typeof settings.callId === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(settings.callId)
    ? settings.callId
    : `local-${Array.from(crypto.getRandomValues(new Uint8Array(8)), (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
  return token === null ? { callId, gated } : { callId, token, gated };
}

// ---- visibility -------------------------------------------------------------------------------

/** Why an entry is hidden, or null when the agent may see it. */
function hiddenReason(kind, entry) {
  if (core.sessionState === 'pending' || !core.scanned) {
    return 'pending';
  }
  if (core.sessionState === 'failed') {
    return 'session_unavailable';
  }
  if (core.sessionState === 'off') {
    return 'page_tools_off';
  }
  if (kind === 'tool' && entry.raw.isDisabled && entry.raw.isDisabled()) {
    return 'disabled';
  }
  if (core.overLimit.has(`${kind}:${entry.name}`)) {
    return 'over_limit';
  }
  const decision = core.decisions.get(`${kind}:${entry.name}`);
  if (!decision || decision.fingerprint !== entry.fingerprint) {
    return 'pending';
  }
  if (decision.decision === 'allow' || decision.decision === 'ask_approval') {
    return null;
  }
  return decision.reason || 'denied by policy';
}

function visibleTools() {
  return core.tools.filter((entry) => hiddenReason('tool', entry) === null);
}

function catalog() {
  const tools = visibleTools().map((entry) => jsonClone(describeTool(entry.raw, entry.name)));
  const contexts = [];
  for (const entry of core.contexts) {
    if (hiddenReason('context', entry) !== null) {
      continue;
    }
    let text = '';
    try {
      text = String(entry.raw.read());
    } catch (error) {
      text = '';
    }
    contexts.push({ name: entry.name, text, source: entry.raw.source });
  }
  return { tools, contexts };
}

function hidden() {
  const list = [];
  for (const [kind, entries] of [['tool', core.tools], ['context', core.contexts]]) {
    for (const entry of entries) {
      const reason = hiddenReason(kind, entry);
      if (reason !== null) {
        list.push({ kind, name: entry.name, reason });
      }
    }
  }
  return list;
}

/** Tells hooks and subscribers when what an agent can see (or what is hidden, and why) changed. */
function changed() {
  const signature = JSON.stringify([catalog(), hidden()]);
  if (signature === core.lastSignature) {
    return;
  }
  core.lastSignature = signature;
  for (const hook of catalogHooks) {
    try {
      hook();
    } catch (error) {
      warn('a catalog hook failed', String(error && error.message));
    }
  }
  for (const listener of Array.from(subscribers)) {
    try {
      listener();
    } catch (error) {
      warn('a catalog subscriber failed', String(error && error.message));
    }
  }
}

function subscribe(listener) {
  if (typeof listener !== 'function') {
    throw new TypeError('subscribe() needs a function');
  }
  subscribers.add(listener);
  return () => {
    subscribers.delete(listener);
  };
}

function maybeReady() {
  const settled = core.sessionState === 'off' || core.sessionState === 'failed' || roundTrips > 0;
  if (core.scanned && settled) {
    resolveReady();
  }
}

// ---- calling a tool -----------------------------------------------------------------------------

function failure(code, message, details) {
  const error = { code, message };
  if (details !== undefined) {
    error.details = details;
  }
  return { ok: false, error };
}

/**
 * Calls a catalog tool: `{ok: true, result}` or `{ok: false, error: {code, message, details?}}`,
 * never a rejection. Nothing of the page runs unless the tool is visible, enabled, and the
 * arguments match its input schema.
 */
function callTool(name, args, options) {
  const settings = options && typeof options === 'object' ? options : {};
  const timeoutMs = Number.isFinite(settings.timeoutMs) && settings.timeoutMs > 0
    ? settings.timeoutMs
    : core.limits.call_timeout_ms || DEFAULT_LIMITS.call_timeout_ms;
  const controller = new AbortController();
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        resolve(outcome);
      }
    };
    // Set when a form call that ends unsent took its values out of the form again.
    let undone = '';
    const timer = setTimeout(() => {
      controller.abort(new ToolCallError('timeout', `no answer within ${timeoutMs} ms`));
      finish(failure('timeout', `${name} did not answer within ${timeoutMs} ms${undone}`));
    }, timeoutMs);
    const cancel = () => {
      controller.abort(new ToolCallError('cancelled', 'the caller cancelled the call'));
      finish(failure('cancelled', `the caller cancelled the call${undone}`));
    };
    if (settings.signal) {
      if (settings.signal.aborted) {
        cancel();
      }
      settings.signal.addEventListener('abort', cancel, { once: true });
    }
    ready
      .then(() => {
        if (settled) {
          return undefined;
        }
        const entry = core.tools.find((candidate) => candidate.name === name);
        if (!entry) {
          return failure('unknown_tool', `there is no tool named ${JSON.stringify(String(name))}`);
        }
        const reason = hiddenReason('tool', entry);
        if (reason === 'disabled') {
          return failure('disabled', `${name} is disabled`);
        }
        if (reason !== null) {
          return failure('hidden_by_policy', `${name} is not available to the agent (${reason})`);
        }
        let input;
        try {
          input = args === undefined || args === null ? {} : jsonClone(args);
        } catch (error) {
          return failure('invalid_arguments', 'the arguments are not JSON', [{ path: '', message: 'is not JSON' }]);
        }
        const problems = validateSchema(entry.raw.input_schema, input);
        if (problems.length > 0) {
          return failure('invalid_arguments', 'the arguments do not match the input schema', problems);
        }
        // The mark stays on the form while the call runs (its first submission carries it).
        const mark = submissionMarks.set(entry.raw.key, submissionMark(entry, settings));
        // A form call that ends before its submission (timed out, stopped) takes the agent's
        // values out of the form again: a later press of the button must not send them while the
        // call reads as failed (natively filled forms too: the state is taken before the call).
        const filled = DeclarativeForms.draft(entry.raw.key, input);
        controller.signal.addEventListener('abort', () => {
          if (!mark.used() && filled.undo() > 0) {
            undone = '; its values were taken out of the form, which was not sent';
          }
        }, { once: true });
        return Promise.resolve()
          .then(() => entry.raw.invoke(input, { signal: controller.signal }))
          .finally(mark.release)
          .then((result) => resultOutcome(entry.raw, result, settings.text === true), thrownOutcome)
          .then((outcome) => (mark.used() && !settled
            ? withSiteAnswer(mark, outcome, controller.signal)
            : outcome));
      })
      .then((outcome) => {
        if (outcome) {
          finish(outcome);
        }
      });
  });
}

function resultOutcome(raw, result, withText) {
  try {
    const outcome = { ok: true, result: raw.readResult ? raw.readResult(result) : jsonClone(result) };
    if (withText) {
      outcome.text = (raw.resultText || webmcpText)(result);
    }
    return outcome;
  } catch (error) {
    return failure('page_error', 'the tool returned something that is not JSON');
  }
}

function thrownOutcome(error) {
  if (error instanceof ToolCallError) {
    return failure(error.code, error.message, error.details);
  }
  const message = error && typeof error.message === 'string' ? error.message : String(error);
  const details = error && Array.isArray(error.details) ? safeDetails(error.details) : undefined;
  return failure('page_error', message, details);
}

function safeDetails(details) {
  try {
    return jsonClone(details);
  } catch (error) {
    return undefined;
  }
}
