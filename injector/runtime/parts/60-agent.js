// 60-agent.js — the agent client: one turn with the gateway at a time.
//
// Owns `POST /.toolgate/agent/turn` (the user's message, the visible catalog, the contexts'
// current text) and reading its Server-Sent Events with a stream reader (a POST, so no
// event-source object); running each `tool_call` through `callTool` — the same path as
// `__toolgate__.call`, with exactly the arguments the gateway sent — and posting the outcome to
// `/.toolgate/agent/result`; deciding approvals (`/.toolgate/agent/approvals/{id}`); and
// cancelling: stopping a turn aborts its request and every call it started, and so does leaving
// the page. The panel (70-panel.js) is its only user; nothing here is reachable from the page.
//
// Shared with the parts after it:
//   startTurn(message | null, listener) -> {stop()} (null: continue the turn the previous page's
//     form submission took away); listener(event) gets the gateway's events as they
//     are ({event: 'started' | 'text' | 'tool_call' | ...}) plus the client's own:
//     {event: 'tool_running' | 'tool_finished', call_id, tool, ok?, error?},
//     {event: 'refused', status, code, message} (the gateway did not start the turn),
//     {event: 'ended', reason: 'done' | 'error' | 'stopped' | 'lost'} (always last, exactly once;
//     calls of the turn still running are cancelled then).
//   decideApproval(id, approve, comment) -> Promise<{ok: true, record} | {ok: false, error}>
//   loadConversation() -> Promise<[{role, text?, tool?, ok?}] | null> (this tab's conversation so
//     far, as the model saw it; null when there is none) and newConversation() -> Promise (the
//     gateway forgets it; the next turn starts a new one).
//
// The conversation lives on the gateway; this tab only keeps its id, in sessionStorage (the
// tab's page session: it survives reloads and navigations on this site, and ends with the tab).
// Each turn sends it, and `started` names the conversation the turn went on.

const TURN_URL = '/.toolgate/agent/turn';
const RESULT_URL = '/.toolgate/agent/result';
const APPROVALS_URL = '/.toolgate/agent/approvals/';
const CONVERSATION_URL = '/.toolgate/agent/conversation/';
// Refuses a single SSE message above this size instead of buffering without bound.
const MAX_EVENT_CHARS = 1024 * 1024;
const TURN_EVENTS = new Set([
  'started', 'text', 'tool_call', 'tool_invalid', 'tool_denied', 'approval_required', 'approval_resolved', 'error', 'done',
]);

const liveTurns = new Set();

/** This tab's conversation id: sessionStorage where the page may use it, else memory. */
const conversationId = (() => {
  const KEY = 'toolgate-conversation';
  const { getItem, setItem, removeItem } = Storage.prototype;
  let storage = null;
  try {
    storage = window.sessionStorage;
  } catch (error) {
    storage = null;
  }
  let held = null;
  const attempt = (action, fallback) => {
    try {
      return storage ? action() : fallback;
    } catch (error) {
      return fallback;
    }
  };
  return Object.freeze({
    get: () => attempt(() => getItem.call(storage, KEY), held) || held,
    set(id) {
      held = id;
      attempt(() => setItem.call(storage, KEY, id), null);
    },
    clear() {
      held = null;
      attempt(() => removeItem.call(storage, KEY), null);
    },
  });
})();

/**
 * Starts a turn; the listener hears every event of it, `ended` last. `message` null continues
 * the turn an agent's form submission took away from the previous page (the session's
 * `continuation`): the gateway replays it with what the site answered.
 */
function startTurn(message, listener) {
  const controller = new AbortController();
  const turn = { controller, turnId: null, ended: false, failed: false, listener };
  const emit = (event) => {
    if (turn.ended) {
      return;
    }
    try {
      listener(event);
    } catch (error) {
      warn('the agent panel failed on an event', String(error && error.message));
    }
  };
  turn.emit = emit;
  const end = (reason) => {
    if (turn.ended) {
      return;
    }
    emit({ event: 'ended', reason });
    turn.ended = true;
    liveTurns.delete(turn);
    // The gateway no longer waits for the turn's calls: any still running is cancelled, and a
    // form waiting for the user's press takes the assistant's values out again.
    turn.controller.abort();
  };
  turn.end = end;
  liveTurns.add(turn);
  runTurn(turn, message).then(
    (reason) => end(reason),
    (error) => {
      if (controller.signal.aborted) {
        end('stopped');
      } else {
        warn('the agent turn failed', String(error && error.message));
        end('lost');
      }
    },
  );
  return {
    stop() {
      if (!turn.ended) {
        controller.abort();
        end('stopped');
      }
    },
  };
}

async function runTurn(turn, message) {
  const { contexts } = catalog();
  // The visible tools as the catalog POST reports them: a form tool says which form it submits.
  const tools = visibleTools().map((entry) => jsonClone(reportTool(entry)));
  const conversation = conversationId.get();
  const body = JSON.stringify({
    ...(message === null ? { continue: true } : { message }),
    ...(conversation ? { conversation } : {}),
    tools,
    contexts: contexts.map(({ name, text }) => ({ name, text })),
  });
  const response = await gatewayFetch(TURN_URL, {
    method: 'POST',
    credentials: 'same-origin',
    cache: 'no-store',
    redirect: 'error',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'text/event-stream',
      'X-Toolgate-CSRF': core.csrf || '',
    },
    body,
    signal: turn.controller.signal,
  });
  if (!response.ok) {
    const error = await errorOf(response);
    turn.emit({ event: 'refused', status: response.status, code: error.code, message: error.message });
    return 'error';
  }
  if (!response.body) {
    return 'lost';
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let heldCr = '';
  let outcome = 'lost';
  for (;;) {
    const { value, done } = await reader.read();
    let chunk = heldCr + decoder.decode(value || new Uint8Array(0), { stream: !done });
    // Messages end with a blank line; accept \n, \r\n and \r line ends alike (a \r at the end
    // of a chunk waits for the next one, which may start with its \n).
    heldCr = !done && chunk.endsWith('\r') ? '\r' : '';
    if (heldCr) {
      chunk = chunk.slice(0, -1);
    }
    buffer += chunk.replace(/\r\n?/g, '\n');
    let boundary = buffer.indexOf('\n\n');
    while (boundary !== -1) {
      const block = buffer.slice(0, boundary);
      buffer = buffer.slice(boundary + 2);
      const event = parseEvent(block);
      if (event) {
        const result = handleEvent(turn, event);
        if (result) {
          outcome = result;
        }
      }
      boundary = buffer.indexOf('\n\n');
    }
    if (buffer.length > MAX_EVENT_CHARS) {
      reader.cancel().catch(() => {});
      return 'lost';
    }
    if (done) {
      return outcome;
    }
  }
}

/** `{code, message}` from a JSON error answer, or one made from the status. */
async function errorOf(response) {
  try {
    const answer = await readJson.call(response);
    if (answer && answer.error && typeof answer.error.message === 'string') {
      return { code: String(answer.error.code || 'http_' + response.status), message: answer.error.message };
    }
  } catch (error) {
    // Not JSON: fall through to the status.
  }
  return { code: 'http_' + response.status, message: `the gateway answered ${response.status}` };
}

/** One SSE message (`event:`/`data:` lines) as the event object, or null. */
function parseEvent(block) {
  let name = 'message';
  const data = [];
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) {
      continue;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) {
      value = value.slice(1);
    }
    if (field === 'event') {
      name = value;
    } else if (field === 'data') {
      data.push(value);
    }
  }
  if (!TURN_EVENTS.has(name) || data.length === 0) {
    return null;
  }
  try {
    const payload = JSON.parse(data.join('\n'));
    if (!payload || typeof payload !== 'object') {
      return null;
    }
    return { ...payload, event: name };
  } catch (error) {
    return null;
  }
}

/** Passes an event on and acts on it; returns the turn's outcome when the event decides it. */
function handleEvent(turn, event) {
  switch (event.event) {
    case 'started':
      turn.turnId = typeof event.turn_id === 'string' ? event.turn_id : null;
      if (typeof event.conversation_id === 'string' && event.conversation_id) {
        conversationId.set(event.conversation_id);
      }
      turn.emit(event);
      return null;
    case 'tool_call':
      turn.emit(event);
      runToolCall(turn, event);
      return null;
    case 'error':
      turn.failed = true;
      turn.emit(event);
      return 'error';
    case 'done':
      turn.emit(event);
      return turn.failed ? 'error' : 'done';
    default:
      turn.emit(event);
      return null;
  }
}

/**
 * Runs one call the gateway sent, with exactly its arguments, through the runtime's one call path
 * (visibility, validation, timeout), then posts the outcome. Stopping the turn cancels the call
 * and nothing is posted.
 */
async function runToolCall(turn, event) {
  const callId = String(event.call_id);
  const tool = String(event.tool);
  turn.emit({ event: 'tool_running', call_id: callId, tool });
  // The gateway sends `approval_token` with an approved call; a form tool's submission carries it
  // with the call id (45-forms-execute.js) and the proxy consumes it, once.
  const options = { signal: turn.controller.signal, callId };
  if (typeof event.approval_token === 'string') {
    options.approvalToken = event.approval_token;
  }
  const outcome = await callTool(tool, event.args, options);
  if (turn.controller.signal.aborted || turn.ended) {
    return;
  }
  turn.emit({ event: 'tool_finished', call_id: callId, tool, ok: outcome.ok, error: outcome.error });
  const answer = { turn_id: turn.turnId, call_id: callId, ok: outcome.ok };
  if (outcome.ok) {
    answer.result = outcome.result;
  } else {
    // The gateway takes the error as one string (`/result` has `error: string`); the code leads
    // so the model can tell a refusal from a page failure.
    answer.error = describeCallError(outcome.error);
  }
  try {
    await fetchJson(RESULT_URL, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Toolgate-CSRF': core.csrf || '' },
      body: JSON.stringify(answer),
    });
  } catch (error) {
    // The gateway times the call out and tells the panel (`tool_timeout`).
    warn('the tool result was not delivered', String(error && error.message));
  }
}

function describeCallError(error) {
  const code = error && error.code ? String(error.code) : 'page_error';
  let text = `${code}: ${error && error.message ? String(error.message) : 'the tool failed'}`;
  if (error && Array.isArray(error.details)) {
    const problems = error.details
      .slice(0, 10)
      .map((problem) => `${problem && problem.path ? problem.path : '/'} ${problem && problem.message}`);
    if (problems.length > 0) {
      text += ` (${problems.join('; ')})`;
    }
  }
  return text;
}

/** Approves or denies one of the user's own pending calls. */
async function decideApproval(id, approve, comment) {
  try {
    const response = await gatewayFetch(APPROVALS_URL + encodeURIComponent(String(id)), {
      method: 'POST',
      credentials: 'same-origin',
      cache: 'no-store',
      redirect: 'error',
      headers: { 'Content-Type': 'application/json', 'X-Toolgate-CSRF': core.csrf || '' },
      body: JSON.stringify({ approve: Boolean(approve), comment: typeof comment === 'string' ? comment : '' }),
    });
    if (!response.ok) {
      return { ok: false, error: await errorOf(response) };
    }
    return { ok: true, record: await readJson.call(response) };
  } catch (error) {
    return { ok: false, error: { code: 'network', message: 'the gateway could not be reached' } };
  }
}

async function loadConversation() {
  const id = conversationId.get();
  if (!id) {
    return null;
  }
  try {
    const response = await gatewayFetch(CONVERSATION_URL + encodeURIComponent(id), {
      method: 'GET',
      credentials: 'same-origin',
      cache: 'no-store',
      redirect: 'error',
      headers: { 'X-Toolgate-CSRF': core.csrf || '' },
    });
    if (response.status === 404) {
      // Forgotten or expired: the next turn starts a new one.
      conversationId.clear();
      return null;
    }
    const answer = response.ok ? await readJson.call(response) : null;
    return answer && Array.isArray(answer.entries) ? answer.entries : null;
  } catch (error) {
    return null;
  }
}

async function newConversation() {
  const id = conversationId.get();
  conversationId.clear();
  if (!id) {
    return;
  }
  try {
    await fetchJson(CONVERSATION_URL + encodeURIComponent(id), {
      method: 'DELETE',
      headers: { 'X-Toolgate-CSRF': core.csrf || '' },
    });
  } catch (error) {
    // The gateway forgets it when it expires; this tab no longer names it.
  }
}

// Leaving the page ends every turn: the request is aborted (the gateway then drops the model
// call) and calls in flight are cancelled.
window.addEventListener('pagehide', () => {
  for (const turn of Array.from(liveTurns)) {
    turn.controller.abort();
    turn.end('stopped');
  }
});
