// 45-forms-execute.js — WebMCP declarative forms: executing a tool form, and `DeclarativeForms`.
//
// Owns `DeclarativeForms` for browsers without native WebMCP: its `describe` and `observe` are
// those of 40-forms.js, and `execute(form, args, {signal})` fills the form all or nothing and
// submits it with an agent-invoked SubmitEvent (`agentInvoked`, `respondWith`), resolving as
// Chromium's `executeTool()` does. Without `toolautosubmit` nothing is submitted until the user
// presses submit: a built-in human gate.
//
// Also owns `submissionMarks`: while an agent's call of a form tool runs (native or polyfilled),
// the form's next submission carries the call's mark: a gateway cookie naming the call, method
// and path, so the proxy can read the site's answer (an honest outcome), and for a form that
// needs approval the hidden inputs `__toolgate_call` and `__toolgate_approval` for the proxy's
// approval check (added when its submit event starts, removed in the next task). The event gets
// `toolgateApproval` ({callId, token}) for pages that send the submission themselves (see
// injector/runtime/README.md). And `withSiteAnswer`: once a marked call settles, what the gateway
// saw the site answer (`/.toolgate/agent/outcomes/{call}`) becomes the call's outcome.

const DeclarativeForms = (() => {
  const { describe, observe, readForm, attr, controlsOf } = formDerivation;
  const SANITIZED = new Set(['number', 'range', 'date', 'time', 'datetime-local', 'month', 'week', 'color']);

  // Members are taken from the prototypes before page scripts run.
  const connected = Object.getOwnPropertyDescriptor(Node.prototype, 'isConnected').get;
  const { querySelectorAll } = Element.prototype;
  const { addEventListener, removeEventListener } = EventTarget.prototype;
  const requestSubmit = HTMLFormElement.prototype.requestSubmit;

  const running = new Map(); // form -> its execution in progress (at most one per form)

  // ---- executing: validate, fill all or nothing, submit -------------------------------------------

  /**
   * Checks every argument before touching the form, fills it (with the page's input and change
   * events), and puts every control back if the filled form fails constraint validation. Then
   * submits (toolautosubmit) or focuses the submit button and waits for the user. Resolves like
   * Chromium's `executeTool()`: the respondWith value as text (webmcpText), or null when the
   * submission navigates; rejects with a ToolCallError (invalid_arguments, cancelled, page_error).
   */
  function execute(form, args, options) {
    const signal = options && options.signal;
    return new Promise((resolve, reject) => {
      if (signal && signal.aborted) {
        throw new ToolCallError('cancelled', 'the call was cancelled before it started');
      }
      const tool = readForm(form);
      if (tool === null) {
        throw new ToolCallError('unknown_tool', 'the form no longer declares a tool');
      }
      const problems = checkArguments(tool.schema, args);
      if (problems.length > 0) {
        throw new ToolCallError('invalid_arguments', 'the arguments do not match the form', problems);
      }
      const submitter = defaultButton(form);
      if (!tool.autosubmit && submitter === null) {
        throw new ToolCallError('page_error',
          'No submit button was found, but for a form without `toolautosubmit`, there must be a submit button');
      }
      const rejected = fill(form, tool, args);
      if (rejected.length > 0) {
        throw new ToolCallError('invalid_arguments', 'the form does not accept these values', rejected);
      }
      const previous = running.get(form);
      if (previous) {
        previous.finish(new ToolCallError('cancelled', 'a newer call on the same form replaced this one'));
      }
      const run = startRun(form, tool, signal, resolve, reject);
      setTimeout(() => fireToolEvent('toolactivated', tool.name), 0);
      if (!tool.autosubmit) {
        submitter.focus();
        return;
      }
      try {
        requestSubmit.call(form, submitter || undefined);
      } catch (error) {
        run.finish(new ToolCallError('page_error', String(error && error.message)));
      }
      if (!run.event) {
        run.finish(new ToolCallError('page_error', 'the form was not submitted'));
      }
    });
  }

  /** What the shared validator does not check: unknown names, Chromium's regex formats. */
  function checkArguments(schema, args) {
    if (args === null || typeof args !== 'object' || Array.isArray(args)) {
      return [{ path: '', message: 'must be an object' }];
    }
    const problems = validateSchema(schema, args);
    for (const [key, value] of Object.entries(args)) {
      const property = Object.prototype.hasOwnProperty.call(schema.properties, key) ? schema.properties[key] : null;
      if (!property) {
        problems.push({ path: pointerTo(key), message: 'is not a field of this form' });
      } else if (typeof property.format === 'string' && property.format.startsWith('^')
        && typeof value === 'string' && !new RegExp(property.format).test(value)) {
        problems.push({ path: pointerTo(key), message: `must match ${property.format}` });
      }
    }
    return problems;
  }

  /**
   * Sets the arguments quietly and checks what the controls made of them (sanitization clamps,
   * rounds or empties values); only then tells the page (input, change) and checks validity,
   * which page scripts may compute in those listeners. Any problem restores every control.
   */
  function fill(form, tool, args) {
    const fields = tool.fields.filter((field) => Object.prototype.hasOwnProperty.call(args, field.name));
    const saved = fields.flatMap((field) => field.controls.map(saveControl));
    const problems = [];
    for (const field of fields) {
      setField(field, args[field.name]);
      if (!holds(field, args[field.name])) {
        problems.push({ path: pointerTo(field.name), message: `is not a value this ${field.kind} field accepts` });
      }
    }
    if (problems.length > 0) {
      saved.forEach(restoreControl);
      return problems;
    }
    const changed = saved.filter((before) => JSON.stringify(before.state) !== JSON.stringify(saveControl(before.control).state));
    dispatchChanges(changed);
    const checked = tool.autosubmit ? controlsOf(form) : fields.flatMap((field) => field.controls);
    for (const control of checked) {
      if (control.willValidate && !control.validity.valid) {
        problems.push({ path: pointerTo(control.name), message: control.validationMessage || 'is not valid' });
      }
    }
    if (problems.length > 0) {
      changed.forEach(restoreControl);
      dispatchChanges(changed);
    }
    return problems;
  }

  function setField(field, value) {
    const [control] = field.controls;
    if (field.kind === 'checkbox') {
      control.checked = value === true;
    } else if (field.kind === 'checkbox-group') {
      field.controls.forEach((box) => { box.checked = value.includes(box.value); });
    } else if (field.kind === 'radio') {
      const chosen = field.controls.find((radio) => radio.value === value);
      field.controls.forEach((radio) => { radio.checked = radio === chosen; });
    } else if (field.kind === 'select-multiple') {
      Array.from(control.options).forEach((option) => { option.selected = value.includes(option.value); });
    } else {
      control.value = String(value);
    }
  }

  function holds(field, value) {
    const { value: held } = field.controls[0];
    if (!SANITIZED.has(field.kind)) {
      return true;
    }
    if (field.kind === 'number' || field.kind === 'range') {
      return held !== '' && Number(held) === value;
    }
    return held === (field.kind === 'color' ? value.toLowerCase() : value);
  }

  function saveControl(control) {
    const state = control.tagName === 'SELECT' ? Array.from(control.options, (option) => option.selected)
      : control.type === 'checkbox' || control.type === 'radio' ? control.checked : control.value;
    return { control, state };
  }

  function restoreControl({ control, state }) {
    if (control.tagName === 'SELECT') {
      Array.from(control.options).forEach((option, index) => { option.selected = state[index]; });
    } else {
      control[control.type === 'checkbox' || control.type === 'radio' ? 'checked' : 'value'] = state;
    }
  }

  /** Like Chromium: `input` then `change` on each changed control (a radio group: the checked one). */
  function dispatchChanges(saved) {
    for (const { control } of saved) {
      if (control.type !== 'radio' || control.checked) {
        control.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
        control.dispatchEvent(new Event('change', { bubbles: true }));
      }
    }
  }

  /** The form's default button: its first submit button in tree order, or null. */
  function defaultButton(form) {
    return controlsOf(form).find((control) => control.type === 'submit')
      || Array.from(querySelectorAll.call(form, 'input[type=image]')).find((image) => image.form === form) || null;
  }

  function pointerTo(name) {
    return `/${String(name).replace(/~/g, '~0').replace(/\//g, '~1')}`;
  }

  // ---- an execution in progress: the submit event, respondWith, cancellation --------------------

  function startRun(form, tool, signal, resolve, reject) {
    const cancel = (message) => run.finish(new ToolCallError('cancelled', message));
    const watcher = new MutationObserver(() => {
      if (!connected.call(form)) {
        cancel('the form was removed from the page');
      } else if (attr(form, 'toolname') !== tool.name || attr(form, 'tooldescription') !== tool.description) {
        cancel('Tool execution cancelled, since tool definition was updated');
      }
    });
    const onReset = (event) => setTimeout(() => event.defaultPrevented || cancel('Tool execution cancelled by a form reset'), 0);
    const onAbort = () => {
      fireToolEvent('toolcancel', tool.name);
      cancel('Tool execution cancelled by abort signal');
    };
    const run = {
      event: null,
      response: null,
      finish(error, value) {
        if (running.get(form) !== run) {
          return;
        }
        running.delete(form);
        watcher.disconnect();
        removeEventListener.call(form, 'reset', onReset);
        signal?.removeEventListener('abort', onAbort);
        if (error) {
          reject(error);
        } else {
          resolve(value);
        }
      },
    };
    running.set(form, run);
    watcher.observe(document, { childList: true, subtree: true });
    watcher.observe(form, { attributes: true, attributeFilter: ['toolname', 'tooldescription'] });
    addEventListener.call(form, 'reset', onReset);
    signal?.addEventListener('abort', onAbort, { once: true });
    return run;
  }

  /**
   * The submit event of a form with an execution in progress gets `agentInvoked = true` and a
   * working `respondWith` (the user's own click counts too, as in Chromium). Without native
   * WebMCP every other SubmitEvent reads `agentInvoked` false, as it does natively.
   */
  function onSubmit(event) {
    const run = running.get(event.target);
    if (!run || run.event) {
      return;
    }
    run.event = event;
    Object.defineProperty(event, 'agentInvoked', { value: true, enumerable: true });
    Object.defineProperty(event, 'respondWith', {
      value(response) {
        if (!event.defaultPrevented) {
          throw new DOMException('To call respondWith, you must first call preventDefault.', 'InvalidStateError');
        }
        if (run.response) {
          throw new DOMException('respondWith() was already called.', 'InvalidStateError');
        }
        run.response = Promise.resolve(response);
      },
    });
    // A task runs after every listener of this dispatch has had its say.
    setTimeout(() => settle(run, event), 0);
  }

  function settle(run, event) {
    if (run.response) {
      run.response.then((value) => {
        let text;
        try {
          text = webmcpText(value);
        } catch (error) {
          run.finish(new ToolCallError('page_error', 'the respondWith value cannot be serialised'));
          return;
        }
        run.finish(null, text);
      }, (reason) => run.finish(
        new ToolCallError('page_error', `respondWith promise was rejected${reason && reason.message ? `: ${reason.message}` : ''}`)));
    } else if (event.defaultPrevented) {
      run.finish(new ToolCallError('page_error', "The site has a programming error: it called preventDefault() on the 'submit' "
        + 'event, without also calling respondWith() with the tool result'));
    } else {
      // The submission navigates (this document or another frame): Chromium resolves with null.
      run.finish(null, null);
    }
  }

  function installHooks() {
    if (typeof SubmitEvent === 'function' && !('agentInvoked' in SubmitEvent.prototype)) {
      Object.defineProperty(SubmitEvent.prototype, 'agentInvoked', { get: () => false, configurable: true });
      Object.defineProperty(SubmitEvent.prototype, 'respondWith', {
        value() {
          throw new DOMException('You can only call respondWith on an submit event that has agentInvoked == true.',
            'InvalidStateError');
        },
        configurable: true,
        writable: true,
      });
    }
    window.addEventListener('submit', onSubmit, true);
  }

  /** Chromium fires these at `document.modelContext` (ours when there is no native one). */
  function fireToolEvent(type, toolName) {
    const context = document.modelContext;
    const target = context && typeof context.dispatchEvent === 'function' ? context : window;
    const event = new Event(type);
    Object.defineProperty(event, 'toolName', { value: toolName, enumerable: true });
    target.dispatchEvent(event);
  }

  /**
   * The state of `form`'s controls named in `args`, taken before an agent's call fills them;
   * `undo()` puts back every one that changed since (with the page's input and change events)
   * and says how many. For a call that ends without its submission (timed out, stopped), so the
   * agent's values do not stay in the form for a later press of its button to send.
   */
  function draft(form, args) {
    if (!(form instanceof HTMLFormElement) || args === null || typeof args !== 'object') {
      return { undo: () => 0 };
    }
    const names = new Set(Object.keys(args));
    const saved = controlsOf(form).filter((control) => names.has(control.name)).map(saveControl);
    return {
      undo() {
        const changed = saved.filter((before) => JSON.stringify(before.state) !== JSON.stringify(saveControl(before.control).state));
        changed.forEach(restoreControl);
        dispatchChanges(changed);
        return changed.length;
      },
    };
  }

  // Installed when the runtime starts, before page scripts: the runtime is the first script.
  installHooks();
  return Object.freeze({ describe, execute, observe, draft });
})();

const submissionMarks = (() => {
  const CALL_FIELD = '__toolgate_call';
  const APPROVAL_FIELD = '__toolgate_approval';
  const { createElement } = Document.prototype;
  const { appendChild } = Node.prototype;
  const { setAttribute, hasAttribute, remove } = Element.prototype;
  const setCookie = Object.getOwnPropertyDescriptor(Document.prototype, 'cookie').set;
  const submitterGetter = Object.getOwnPropertyDescriptor(SubmitEvent.prototype, 'submitter').get;
  const [formMethodOf, formActionOf] = ['method', 'action']
    .map((name) => Object.getOwnPropertyDescriptor(HTMLFormElement.prototype, name).get);
  const marks = new Map(); // form -> {callId, token?, gated, used, sent, where}
  const NONE = Object.freeze({ callId: null, release() {}, used: () => false, sent: () => false, forget() {} });

  /**
   * Marks `form`'s next submission with `mark` (null: nothing). Returns `{callId, release(),
   * used(), sent(), forget()}`: release unmarks the form; used says whether a submission carried
   * the mark, sent whether the browser itself sent it (the page did not cancel it to send it its
   * own way); forget expires the mark's cookie (a cancelled submission the page never sent).
   */
  function set(form, mark) {
    if (!mark || !(form instanceof HTMLFormElement)) {
      return NONE;
    }
    const entry = { ...mark, used: false, sent: false, where: null };
    marks.set(form, entry);
    return Object.freeze({
      callId: entry.callId,
      release() {
        if (marks.get(form) === entry) {
          marks.delete(form);
        }
      },
      used: () => entry.used,
      sent: () => entry.sent,
      forget() {
        if (entry.where) {
          markCookie(entry.callId, entry.where, 0);
        }
      },
    });
  }

  function hidden(form, name, value) {
    const input = createElement.call(document, 'input');
    setAttribute.call(input, 'type', 'hidden');
    setAttribute.call(input, 'name', name);
    setAttribute.call(input, 'value', value);
    appendChild.call(form, input);
    return input;
  }

  /**
   * Where the submission goes, as the browser will send it: the submitter's `formmethod` and
   * `formaction` override the form's. Null for a dialog form or another origin.
   */
  function target(form, submitter) {
    const own = (name) => submitter && hasAttribute.call(submitter, name);
    const method = (own('formmethod') ? submitter.formMethod : formMethodOf.call(form)).toUpperCase();
    const action = own('formaction') ? submitter.formAction : formActionOf.call(form);
    let url;
    try {
      url = new URL(action, document.baseURI);
    } catch (error) {
      return null;
    }
    if ((method !== 'GET' && method !== 'POST') || url.origin !== window.location.origin) {
      return null;
    }
    return { method, path: url.pathname };
  }

  /**
   * The gateway's submission cookie: the call, the method and the path (`%`, `;` and `,`
   * escaped), for the proxy to watch the site's answer. Sites never see it; the proxy expires it.
   */
  function markCookie(callId, where, maxAge) {
    const secure = window.location.protocol === 'https:';
    const name = secure ? '__Host-toolgate-submit' : 'toolgate-submit';
    const path = where.path.replace(/[%;,]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`);
    const attributes = `; Path=/; Max-Age=${maxAge}; SameSite=Strict${secure ? '; Secure' : ''}`;
    setCookie.call(document, `${name}=${callId}:${where.method}:${path}${attributes}`);
  }

  /**
   * First in line (a capturing listener installed before page scripts): the submission is marked
   * for the gateway while the page's own submit listeners run and when the browser builds the
   * submission right after the event. A gated form also gets the call (and token) as hidden
   * fields, so `new FormData(form)` in the page's listeners carries them; the next task takes
   * them out again, so a later human submission of the same form is unmarked.
   */
  function onSubmit(event) {
    const mark = marks.get(event.target);
    if (!mark || mark.used) {
      return;
    }
    mark.used = true;
    const where = target(event.target, submitterGetter.call(event));
    if (where) {
      mark.where = where;
      markCookie(mark.callId, where, 60);
    }
    // After every listener of this dispatch: whether the browser sends it, or the page took over.
    setTimeout(() => { mark.sent = !event.defaultPrevented; }, 0);
    const approval = Object.freeze(mark.token ? { callId: mark.callId, token: mark.token } : { callId: mark.callId });
    Object.defineProperty(event, 'toolgateApproval', { value: approval, enumerable: true });
    if (!mark.gated) {
      return;
    }
    const inputs = [hidden(event.target, CALL_FIELD, mark.callId)];
    if (mark.token) {
      inputs.push(hidden(event.target, APPROVAL_FIELD, mark.token));
    }
    setTimeout(() => inputs.forEach((input) => remove.call(input)), 0);
  }

  window.addEventListener('submit', onSubmit, true);
  return Object.freeze({ set });
})();

const OUTCOMES_URL = '/.toolgate/agent/outcomes/';

/**
 * What the site answered a form tool's submission, when the gateway saw one (the call's own
 * outcome otherwise): a refusal becomes the call's error (`rejected_by_site` with the site's
 * messages); an accepted submission keeps the page's own result, or, where the page gave none
 * (the form navigated), gets the landing URL and title.
 */
async function withSiteAnswer(mark, outcome, signal) {
  // The mark learns in a task after the submit event whether the browser sends the submission.
  await new Promise((resolve) => { setTimeout(resolve, 0); });
  // A submission the browser sent may still be on its way to the gateway; one the page cancelled
  // to send itself has reached it by now, or never will.
  const query = mark.sent() ? '' : '?arrival=0';
  let answer;
  try {
    answer = await fetchJson(`${OUTCOMES_URL}${encodeURIComponent(mark.callId)}${query}`, {
      method: 'GET',
      headers: { 'X-Toolgate-CSRF': core.csrf || '' },
      signal,
    });
  } catch (error) {
    return outcome;
  }
  if (!answer || answer.observed !== true) {
    if (!mark.sent()) {
      mark.forget();
    }
    return outcome;
  }
  if (answer.ok !== true) {
    const error = answer.error || {};
    const details = Array.isArray(error.messages)
      ? error.messages.map((message) => ({ path: '', message: String(message) }))
      : undefined;
    return failure(String(error.code || 'rejected_by_site'), String(error.message || 'the site refused the submission'), details);
  }
  // null: the submission navigated and the page gave no result of its own. A page's own
  // `executeTool()` keeps Chromium's answer (`text`, null then); the site's answer is for agents.
  const own = outcome.ok ? outcome.result : null;
  const result = own === null || own === undefined ? jsonClone(answer.result) : own;
  return outcome.ok ? { ...outcome, result } : { ok: true, result };
}
