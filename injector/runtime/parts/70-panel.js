// 70-panel.js — the agent panel: the user's side of the agent.
//
// Owns the `<toolgate-panel>` element the runtime adds at the end of <body> and everything in its
// shadow root: the launcher, the chat (answers stream in), the tools and contexts the agent sees
// and those kept from it (greyed, with the reason), example prompts made from the visible tools,
// approval cards with the exact arguments the gateway will hold the call to, error notices, and
// voice input where the browser has speech recognition.
//
// Safety rules: page and model text only ever goes into the DOM through `textContent` (never
// markup); styles are a constructed stylesheet (not subject to the page's `style-src`), with a
// <style> element only where constructed sheets do not exist; state is marked with data
// attributes (documented in the README).
//
// The site never sees the conversation: the shadow root is closed and no reference to it is
// reachable from page scripts (not on the host, not on window, not in any event); it is attached
// through `attachShadow` as captured when the runtime started, before any page script ran; the
// host is never a page-defined custom element (whose ElementInternals could reach a closed
// root); and UI events that carry what the user types, pastes or copies stop at the shadow root
// instead of bubbling to the page's listeners. Tests reach the root through the DevTools
// protocol, which pierces closed roots.

const PANEL_TAG = 'toolgate-panel';

// Captured when the runtime starts (this part runs before any page script): a page that later
// replaces these cannot get hold of the closed root or stop the events below from stopping.
const callOn = Reflect.apply;
const createElementIn = Document.prototype.createElement;
const attachShadowTo = Element.prototype.attachShadow;
const listenOn = EventTarget.prototype.addEventListener;
const stopEvent = Event.prototype.stopPropagation;
const customElementRegistry = window.customElements;
const definedElement = typeof CustomElementRegistry === 'function' ? CustomElementRegistry.prototype.get : null;

// Composed UI events that carry the user's text (keys, input data, clipboard): outside listeners
// would see them retargeted to the host, key and data included. Listeners the page registers for
// the capture phase on window or document still run before the shadow root (see the README).
const PRIVATE_EVENTS = [
  'keydown', 'keyup', 'keypress', 'beforeinput', 'input', 'textInput',
  'compositionstart', 'compositionupdate', 'compositionend', 'copy', 'cut', 'paste',
];

let panelMounted = false;

function createPanel() {
  const host = callOn(createElementIn, document, [PANEL_TAG]);
  const shadow = callOn(attachShadowTo, host, [{ mode: 'closed' }]);
  for (const type of PRIVATE_EVENTS) {
    callOn(listenOn, shadow, [type, (event) => callOn(stopEvent, event, [])]);
  }
  if ('adoptedStyleSheets' in shadow && typeof CSSStyleSheet === 'function') {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(PANEL_CSS);
    shadow.adoptedStyleSheets = [sheet];
  } else {
    shadow.append(element('style', { text: PANEL_CSS }));
  }

  const ids = { panel: 'toolgate-agent-panel', title: 'toolgate-agent-title', input: 'toolgate-agent-input' };
  const launcher = element('button', {
    type: 'button', class: 'launcher', 'aria-label': 'Open the assistant', 'aria-expanded': 'false',
    'aria-controls': ids.panel, 'data-action': 'open', text: '✦',
  });
  const closeButton = element('button', {
    type: 'button', class: 'close', 'aria-label': 'Close the assistant', 'data-action': 'close', text: '×',
  });
  const who = element('span', { class: 'who' });
  // Signing out is always one click away on a site page (a shared machine must not stay signed in).
  const signOut = element('a', { class: 'signout', href: LOGOUT_URL, 'data-action': 'sign-out', text: 'Sign out' });
  const fresh = element('button', {
    type: 'button', class: 'fresh', 'data-action': 'new-conversation', text: 'New conversation',
    title: 'Start over: the assistant forgets this conversation',
  });
  const entriesList = element('ul', { class: 'entries', 'aria-label': 'Tools and contexts' });
  const entriesSummary = element('summary', { text: 'What the assistant can see' });
  const entries = element('details', { class: 'catalog', 'data-section': 'catalog' }, [entriesSummary, entriesList]);
  const notice = element('p', { class: 'notice', role: 'status', 'data-section': 'notice', hidden: true });
  const examples = element('div', { class: 'examples', role: 'group', 'aria-label': 'Example requests', 'data-section': 'examples' });
  const log = element('ol', { class: 'log', role: 'log', 'aria-live': 'polite', 'aria-label': 'Conversation', 'data-section': 'log' });
  const body = element('div', { class: 'body' }, [notice, entries, examples, log]);
  const input = element('textarea', {
    id: ids.input, rows: '2', placeholder: 'Ask about this page…', 'data-field': 'message', autocomplete: 'off',
  });
  const label = element('label', { for: ids.input, class: 'visually-hidden', text: 'Message to the assistant' });
  const mic = element('button', {
    type: 'button', class: 'mic', 'aria-label': 'Speak your message', 'aria-pressed': 'false', 'data-action': 'voice',
    hidden: true,
  }, [micIcon()]);
  const send = element('button', { type: 'submit', class: 'send', 'data-action': 'send', text: 'Send' });
  const stop = element('button', { type: 'button', class: 'stop', 'data-action': 'stop', text: 'Stop', hidden: true });
  const form = element('form', { 'aria-label': 'Ask the assistant' }, [label, input, mic, send, stop]);
  const panel = element('section', {
    id: ids.panel, class: 'panel', role: 'dialog', 'aria-modal': 'false', 'aria-labelledby': ids.title, hidden: true,
  }, [
    element('header', {}, [element('h2', { id: ids.title, text: 'Assistant' }), who, signOut, fresh, closeButton]),
    body,
    form,
  ]);
  const root = element('div', { class: 'root', 'data-open': 'false', 'data-turn': 'idle' }, [launcher, panel]);
  shadow.append(root);

  const state = { turn: null, withheld: new Map(), assistant: null, tools: new Map(), approvals: new Map() };

  // ---- opening and closing --------------------------------------------------------------------

  function open() {
    panel.hidden = false;
    launcher.removeAttribute('data-attention');
    root.setAttribute('data-open', 'true');
    launcher.setAttribute('aria-expanded', 'true');
    launcher.setAttribute('aria-label', 'Close the assistant');
    renderCatalog();
    input.focus();
  }

  function close() {
    panel.hidden = true;
    root.setAttribute('data-open', 'false');
    launcher.setAttribute('aria-expanded', 'false');
    launcher.setAttribute('aria-label', 'Open the assistant');
    launcher.focus();
  }

  launcher.addEventListener('click', () => (panel.hidden ? open() : close()));
  closeButton.addEventListener('click', close);
  root.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && !panel.hidden) {
      event.preventDefault();
      event.stopPropagation();
      close();
    }
  });

  // ---- what the agent sees --------------------------------------------------------------------

  function renderCatalog() {
    const session = core.session;
    who.textContent = session && session.user ? String(session.user.name || session.user.id || '') : '';
    const { tools, contexts } = catalog();
    const hiddenEntries = hidden();
    const rows = [];
    for (const [kind, list] of [['tool', tools], ['context', contexts]]) {
      for (const entry of list) {
        const withheld = state.withheld.get(`${kind}:${entry.name}`);
        rows.push({ kind, name: entry.name, title: entry.title, reason: withheld, visible: withheld === undefined });
      }
    }
    for (const entry of hiddenEntries) {
      rows.push({ kind: entry.kind, name: entry.name, reason: hiddenReasonLabel(entry.reason), visible: false });
    }
    entriesList.replaceChildren(...rows.map((row) => element('li', {
      class: 'entry', 'data-entry': row.kind, 'data-name': row.name, 'data-visible': String(row.visible),
    }, [
      element('span', { class: 'kind', text: row.kind }),
      element('span', { class: 'name', text: row.name }),
      ...(row.visible ? [] : [element('span', { class: 'reason', text: `hidden: ${row.reason}` })]),
    ])));
    const visibleTools = rows.filter((row) => row.kind === 'tool' && row.visible).length;
    const visibleContexts = rows.filter((row) => row.kind === 'context' && row.visible).length;
    const hiddenCount = rows.filter((row) => !row.visible).length;
    entriesSummary.textContent = `The assistant sees ${visibleTools} tool${visibleTools === 1 ? '' : 's'} and `
      + `${visibleContexts} context${visibleContexts === 1 ? '' : 's'}`
      + (hiddenCount > 0 ? ` (${hiddenCount} hidden by policy)` : '');
    entries.hidden = rows.length === 0;

    if (core.sessionState === 'off') {
      showNotice('off', 'Page tools are off for you on this site: the assistant can answer questions but cannot use this page.');
    } else if (tools.length === 0 && hiddenEntries.some((entry) => entry.kind === 'tool' && entry.reason === 'pending')) {
      showNotice('pending', 'Checking with the gateway which tools the assistant may use…');
    } else if (tools.length === 0) {
      showNotice('no_tools', 'This page offers no tools to the assistant: it can answer questions but cannot act here.');
    } else {
      notice.hidden = true;
      notice.removeAttribute('data-code');
    }
    renderExamples(tools, contexts);
  }

  function showNotice(code, text) {
    notice.hidden = false;
    notice.setAttribute('data-code', code);
    notice.textContent = text;
  }

  function renderExamples(tools, contexts) {
    const prompts = [];
    const usable = tools.filter((tool) => !state.withheld.has(`tool:${tool.name}`));
    if (usable.length > 0) {
      prompts.push('What can you do on this page?');
    } else if (contexts.length > 0) {
      prompts.push('Summarize what this page shows.');
    }
    for (const tool of usable) {
      const text = examplePrompt(tool);
      if (text && !prompts.includes(text)) {
        prompts.push(text);
      }
      if (prompts.length >= MAX_EXAMPLES) {
        break;
      }
    }
    examples.replaceChildren(...prompts.map((text) => {
      const button = element('button', { type: 'button', 'data-example': '', text });
      button.addEventListener('click', () => {
        input.value = text;
        input.focus();
      });
      return button;
    }));
    examples.hidden = prompts.length === 0 || log.childElementCount > 0;
  }

  subscribe(() => {
    if (!panel.hidden) {
      renderCatalog();
    }
  });

  // ---- the conversation -----------------------------------------------------------------------

  function append(node) {
    const nearBottom = body.scrollHeight - body.scrollTop - body.clientHeight < 40;
    log.append(node);
    examples.hidden = true;
    if (nearBottom || node.getAttribute('data-role') === 'user') {
      body.scrollTop = body.scrollHeight;
    }
    return node;
  }

  function message(role, text, extra) {
    return append(element('li', { class: 'msg', 'data-role': role, ...(extra || {}), text }));
  }

  function showError(code, text) {
    const title = ERROR_TITLES[code] || 'Something went wrong.';
    append(element('li', { class: 'msg', 'data-role': 'error', 'data-code': code, role: 'alert' }, [
      element('strong', { text: title }),
      element('span', { text: text || '' }),
    ]));
  }

  function setBusy(busy) {
    send.disabled = busy;
    fresh.disabled = busy;
    stop.hidden = !busy;
    send.hidden = busy;
  }

  function submit() {
    const text = input.value.trim();
    if (!text || state.turn) {
      return;
    }
    input.value = '';
    message('user', text);
    run(text);
    stop.focus();
  }

  function run(text) {
    state.assistant = null;
    state.tools.clear();
    root.setAttribute('data-turn', 'running');
    setBusy(true);
    state.turn = startTurn(text, onEvent);
  }

  /**
   * The previous page's turn left it with a form submission: say what the site answered and let
   * the assistant go on from there (it may correct a refused call).
   */
  function continueTurn(continuation) {
    const outcomes = {
      accepted: 'the site accepted it',
      rejected_by_site: 'the site refused it',
      refused_by_gateway: 'Toolgate did not send it',
    };
    open();
    // `pending`: the page loaded before the gateway had the site's answer; the turn brings it.
    const known = Object.prototype.hasOwnProperty.call(outcomes, continuation.outcome);
    const text = known
      ? `${continuation.tool} was submitted: ${outcomes[continuation.outcome]}. Continuing…`
      : 'A form was submitted for you. Continuing with the site\'s answer…';
    const status = !known ? 'running' : continuation.outcome === 'accepted' ? 'done' : 'failed';
    message('tool', text, { 'data-tool': continuation.tool ? String(continuation.tool) : null, 'data-status': status, 'data-continued': 'true' });
    run(null);
  }

  /** The conversation so far (from the gateway, as the model saw it), above anything new. */
  async function showHistory() {
    const entries = await loadConversation();
    if (!entries || entries.length === 0) {
      return;
    }
    const lines = [element('li', {
      class: 'msg', 'data-role': 'note', 'data-history': 'true',
      text: 'Earlier in this conversation, as the assistant saw it (personal data replaced):',
    })];
    for (const entry of entries) {
      const mark = { 'data-history': 'true' };
      if (entry.role === 'tool') {
        lines.push(element('li', {
          class: 'msg', 'data-role': 'tool', 'data-tool': String(entry.tool), 'data-status': entry.ok ? 'done' : 'failed', ...mark,
          text: `${entry.ok ? '✓' : '✗'} ${entry.tool}`,
        }));
      } else if (entry.role === 'user' || entry.role === 'assistant') {
        lines.push(element('li', { class: 'msg', 'data-role': entry.role, ...mark, text: String(entry.text) }));
      }
    }
    log.prepend(...lines);
    examples.hidden = true;
    body.scrollTop = body.scrollHeight;
  }

  function startOver() {
    if (state.turn) {
      return;
    }
    newConversation();
    log.replaceChildren();
    state.assistant = null;
    state.tools.clear();
    state.approvals.clear();
    root.setAttribute('data-turn', 'idle');
    renderCatalog();
    input.focus();
  }

  fresh.addEventListener('click', startOver);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    submit();
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      submit();
    }
  });
  stop.addEventListener('click', () => {
    if (state.turn) {
      state.turn.stop();
    }
  });

  function onEvent(event) {
    switch (event.event) {
      case 'started':
        state.withheld = new Map((event.withheld || []).map((item) => [`${item.kind}:${item.name}`, String(item.reason)]));
        renderCatalog();
        break;
      case 'text':
        if (!state.assistant) {
          state.assistant = message('assistant', '');
          state.assistant.append(document.createTextNode(''));
        }
        state.assistant.firstChild.appendData(String(event.delta || ''));
        if (body.scrollHeight - body.scrollTop - body.clientHeight < 80) {
          body.scrollTop = body.scrollHeight;
        }
        break;
      case 'tool_running': {
        // Later text starts a new bubble below the tool line.
        state.assistant = null;
        // A form the user sends: say so, and point at its button.
        const button = submitAwaited(event.tool);
        const text = button
          ? `${event.tool}: check the filled form on the page and press its “${buttonLabel(button)}” button to send it.`
          : `Running ${event.tool}…`;
        state.tools.set(event.call_id, message('tool', text, {
          'data-tool': event.tool, 'data-call-id': event.call_id, 'data-status': button ? 'awaiting_submit' : 'running',
        }));
        if (button) {
          pointAt(event.call_id, button);
        }
        break;
      }
      case 'tool_finished': {
        stopPointing(event.call_id);
        const line = state.tools.get(event.call_id);
        if (line) {
          // A form that waited for the user's press and ended unsent (timed out, stopped): say
          // so; the runtime took the assistant's values out of it again.
          const code = event.error ? String(event.error.code) : '';
          const unsent = !event.ok && line.getAttribute('data-status') === 'awaiting_submit'
            && (code === 'timeout' || code === 'cancelled');
          line.setAttribute('data-status', event.ok ? 'done' : unsent ? 'not_sent' : 'failed');
          line.textContent = event.ok
            ? `✓ ${event.tool} done`
            : `✗ ${event.tool} ${unsent ? 'not sent' : 'failed'}: ${event.error ? event.error.message : 'error'}`;
        }
        break;
      }
      case 'tool_invalid':
        // Checked on the gateway before any approval: the model gets the problems and may retry.
        state.assistant = null;
        message('tool', `${event.tool}: the assistant's arguments did not fit the tool (${event.problems}); it was asked to correct them.`, {
          'data-tool': event.tool, 'data-call-id': event.call_id, 'data-status': 'invalid',
        });
        break;
      case 'tool_denied':
        state.assistant = null;
        message('denied', `Toolgate blocked ${event.tool}: ${event.reason}`, {
          'data-tool': event.tool, 'data-call-id': event.call_id, role: 'status',
        });
        break;
      case 'approval_required':
        state.assistant = null;
        append(approvalCard(event));
        if (panel.hidden && event.approver === 'user') {
          // The call waits for this user: make the closed launcher say so.
          launcher.setAttribute('data-attention', 'true');
          launcher.setAttribute('aria-label', 'Open the assistant: an action waits for your approval');
        }
        break;
      case 'approval_resolved':
        resolveCard(event.approval_id, String(event.decision));
        break;
      case 'error':
        showError(String(event.code || 'error'), String(event.message || ''));
        break;
      case 'refused':
        showError(event.code, event.message);
        break;
      case 'ended':
        state.turn = null;
        state.assistant = null;
        stopPointing();
        for (const line of state.tools.values()) {
          const status = line.getAttribute('data-status');
          if (status === 'running') {
            line.setAttribute('data-status', 'cancelled');
            line.textContent = `${line.getAttribute('data-tool')} cancelled`;
          } else if (status === 'awaiting_submit') {
            line.setAttribute('data-status', 'not_sent');
            line.textContent = `✗ ${line.getAttribute('data-tool')} not sent: the assistant stopped waiting for the form, `
              + 'and its values were taken out of it.';
          }
        }
        for (const [id, card] of state.approvals) {
          if (card.getAttribute('data-approval-state') === 'pending') {
            resolveCard(id, 'cancelled');
          }
        }
        if (event.reason === 'lost') {
          showError('lost', 'Send your message again.');
        } else if (event.reason === 'stopped') {
          message('tool', 'Stopped.', { 'data-status': 'stopped' });
        }
        root.setAttribute('data-turn', event.reason);
        {
          // The Stop button disappears; keep the keyboard user in the panel.
          const active = shadow.activeElement;
          setBusy(false);
          if (!panel.hidden && (active === null || active === stop)) {
            input.focus();
          }
        }
        break;
      default:
        break;
    }
  }

  // ---- approvals ------------------------------------------------------------------------------

  function approvalCard(event) {
    const id = String(event.approval_id);
    const mine = event.approver === 'user';
    let args;
    try {
      args = JSON.stringify(event.args, null, 2);
    } catch (error) {
      args = String(event.args);
    }
    const status = element('p', { class: 'status', role: 'status', text: mine ? '' : `Waiting for approval by ${event.approver}…` });
    // Nobody else who may decide is signed in (four eyes forbid the user): say so at once.
    const notice = typeof event.notice === 'string' && event.notice
      ? [element('p', { class: 'notice', 'data-field': 'notice', text: event.notice })] : [];
    const approve = element('button', { type: 'button', 'data-action': 'approve', text: 'Approve' });
    const deny = element('button', { type: 'button', 'data-action': 'deny', text: 'Deny' });
    const actions = element('div', { class: 'actions', hidden: !mine }, [approve, deny]);
    const titleId = `toolgate-approval-${state.approvals.size + 1}`;
    const card = element('li', {
      class: 'approval', role: 'group', 'aria-labelledby': titleId, 'data-approval-id': id,
      'data-approval-state': 'pending', 'data-tool': event.tool, 'data-approver': event.approver,
    }, [
      element('h3', { id: titleId, text: `Approve ${event.tool}?` }),
      element('p', { text: 'The assistant wants to run this tool with exactly these arguments:' }),
      element('pre', { class: 'args', 'data-field': 'args', tabindex: '0', 'aria-label': 'Arguments', text: args }),
      actions,
      status,
      ...notice,
    ]);
    const decide = async (approved) => {
      approve.disabled = true;
      deny.disabled = true;
      status.textContent = approved ? 'Approving…' : 'Denying…';
      const answer = await decideApproval(id, approved, '');
      if (answer.ok) {
        // `approval_resolved` from the turn is the final word; this only covers its delay.
        if (card.getAttribute('data-approval-state') === 'pending') {
          status.textContent = approved ? 'Approved; running…' : 'Denied.';
        }
      } else {
        status.textContent = `Could not record the decision: ${answer.error.message}`;
        const open = card.getAttribute('data-approval-state') === 'pending';
        approve.disabled = !open;
        deny.disabled = !open;
      }
    };
    approve.addEventListener('click', () => decide(true));
    deny.addEventListener('click', () => decide(false));
    state.approvals.set(id, card);
    return card;
  }

  function resolveCard(id, decision) {
    const card = state.approvals.get(String(id));
    if (!card) {
      return;
    }
    card.setAttribute('data-approval-state', decision);
    for (const button of card.querySelectorAll('button')) {
      button.disabled = true;
    }
    card.querySelector('.actions').hidden = true;
    const texts = {
      approved: 'Approved.',
      denied: 'Denied: the assistant was told not to run it.',
      expired: 'Expired: nobody decided in time.',
      cancelled: 'Cancelled.',
    };
    card.querySelector('.status').textContent = texts[decision] || decision;
  }

  // ---- voice ----------------------------------------------------------------------------------

  const Recognition = window.SpeechRecognition || window.webkitSpeechRecognition;
  if (typeof Recognition === 'function') {
    mic.hidden = false;
    let recognition = null;
    mic.addEventListener('click', () => {
      if (recognition) {
        recognition.stop();
        return;
      }
      recognition = new Recognition();
      recognition.lang = document.documentElement.lang || navigator.language || 'en-US';
      recognition.interimResults = true;
      recognition.continuous = false;
      const before = input.value ? `${input.value.trimEnd()} ` : '';
      recognition.onresult = (event) => {
        let heard = '';
        for (let index = 0; index < event.results.length; index += 1) {
          heard += event.results[index][0].transcript;
        }
        input.value = before + heard;
      };
      recognition.onerror = (event) => {
        if (event.error !== 'aborted' && event.error !== 'no-speech') {
          showError('voice', String(event.error));
        }
      };
      recognition.onend = () => {
        recognition = null;
        mic.setAttribute('aria-pressed', 'false');
        mic.setAttribute('aria-label', 'Speak your message');
        input.focus();
      };
      mic.setAttribute('aria-pressed', 'true');
      mic.setAttribute('aria-label', 'Stop listening');
      try {
        recognition.start();
      } catch (error) {
        recognition.onend();
      }
    });
  }

  // Once the panel is in the page: the conversation so far, then a turn the previous page's form
  // submission left to continue.
  const continuation = core.continuation;
  setTimeout(() => showHistory().then(() => continuation && continueTurn(continuation)), 0);
  return host;
}

/** Adds the panel once the first catalog round trip is over, when there is a session. */
function mountPanel() {
  if (!core.session || panelMounted || !document.body) {
    return;
  }
  if (definedElement && customElementRegistry && callOn(definedElement, customElementRegistry, [PANEL_TAG])) {
    // A page that defined <toolgate-panel> itself could read even a closed root through the
    // element's ElementInternals: no panel rather than one the page can read.
    warn('the agent panel was not added: the page defines its own <toolgate-panel> element');
    return;
  }
  try {
    panelMounted = true;
    document.body.append(createPanel());
  } catch (error) {
    warn('the agent panel could not be added', String(error && error.message));
  }
}

// Deferred: the gateway round trip (90-start.js) is defined after this part.
ready.then(mountPanel);
