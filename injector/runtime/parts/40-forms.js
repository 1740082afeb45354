// 40-forms.js — WebMCP declarative forms: `<form toolname tooldescription [tooltitle] [toolautosubmit]>`.
//
// Owns `DeclarativeForms` for browsers without native WebMCP: `describe(form)` derives the tool and
// its input schema exactly the way Chromium's native implementation does (the differential test
// in gateway/tests/it/forms.rs holds us to that), `execute(form, args, {signal})` fills the form
// all or nothing and submits it with an agent-invoked SubmitEvent (`agentInvoked`, `respondWith`),
// and `observe(root, onChange)` reports changes that can alter a tool form. Without
// `toolautosubmit` nothing is submitted until the user presses submit: a built-in human gate.

const DeclarativeForms = (() => {
  const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
  const DATE_HINT = "Dates MUST be provided in 'YYYY-MM-DD' format.";
  // Chromium puts these regular expressions in `format` (not `pattern`); they are copied exactly.
  // The time and datetime-local ones end as the step allows: minutes, seconds or milliseconds.
  const FORMAT_PATTERNS = {
    time: '^([01][0-9]|2[0-3]):[0-5][0-9]',
    'datetime-local': '^[0-9]{4}-(0[1-9]|1[0-2])-[0-9]{2}T([01][0-9]|2[0-3]):[0-5][0-9]',
    month: '^[0-9]{4}-(0[1-9]|1[0-2])$',
    week: '^[0-9]{4}-W(0[1-9]|[1-4][0-9]|5[0-3])$',
    color: '^#[0-9a-zA-Z]{6}$',
  };
  const NOT_DATA = new Set(['hidden', 'file', 'image', 'submit', 'reset', 'button']);
  const TEXT_TYPES = new Set(['text', 'search', 'url', 'tel', 'email', 'password']);
  // The input types HTML's `readonly` applies to; readonly controls are left out like disabled ones.
  const READONLY_TYPES = new Set([...TEXT_TYPES, 'number', 'date', 'time', 'datetime-local', 'month', 'week']);
  const SANITIZED = new Set(['number', 'range', 'date', 'time', 'datetime-local', 'month', 'week', 'color']);
  const LABELABLE = new Set(['BUTTON', 'INPUT', 'METER', 'OUTPUT', 'PROGRESS', 'SELECT', 'TEXTAREA']);
  // The attributes a derived tool depends on; `observe` ignores all others.
  const WATCHED = ['toolname', 'tooldescription', 'tooltitle', 'toolautosubmit', 'toolparamdescription', 'name',
    'type', 'disabled', 'readonly', 'required', 'min', 'max', 'step', 'pattern', 'value', 'multiple', 'for',
    'id', 'form'];

  // A control named "elements", "action" or "hasAttribute" shadows the form's own member (forms
  // have [LegacyOverrideBuiltIns]), so a form's members are always taken from the prototypes.
  const formGetter = (name) => Object.getOwnPropertyDescriptor(HTMLFormElement.prototype, name).get;
  const [formElements, formMethod, formAction] = ['elements', 'method', 'action'].map(formGetter);
  const connected = Object.getOwnPropertyDescriptor(Node.prototype, 'isConnected').get;
  const { getAttribute, hasAttribute, matches, closest, querySelector, querySelectorAll } = Element.prototype;
  const { addEventListener, removeEventListener } = EventTarget.prototype;
  const requestSubmit = HTMLFormElement.prototype.requestSubmit;
  const attr = (element, name) => getAttribute.call(element, name);
  const controlsOf = (form) => Array.from(formElements.call(form));

  const running = new Map(); // form -> its execution in progress (at most one per form)

  // ---- describing a form: Chromium's derivation --------------------------------------------------

  function describe(form) {
    const found = readForm(form);
    return found && { name: found.name, ...(found.title ? { title: found.title } : {}), description: found.description,
      input_schema: found.schema, annotations: { read_only: false, consequential: false, untrusted_content: false },
      autosubmit: found.autosubmit };
  }

  /** The tool a form declares (attributes, fields, schema), or null when it declares none. */
  function readForm(form) {
    if (!(form instanceof HTMLFormElement)) {
      return null;
    }
    const name = attr(form, 'toolname');
    const description = attr(form, 'tooldescription');
    if (name === null || description === null || !TOOL_NAME.test(name)) {
      return null;
    }
    const fields = collectFields(form);
    const properties = {};
    for (const field of fields) {
      // defineProperty: a control named "__proto__" is a property, never the object's prototype.
      Object.defineProperty(properties, field.name, { value: field.schema, enumerable: true, writable: true,
        configurable: true });
    }
    const required = fields.filter((field) => field.controls.some((control) => control.required))
      .map((field) => field.name);
    return { name, description, title: attr(form, 'tooltitle') || '', autosubmit: hasAttribute.call(form, 'toolautosubmit'),
      fields, schema: { type: 'object', properties, required } };
  }

  /**
   * Named, enabled, writable data controls grouped by name, in tree order. A name shared by several
   * controls is a radio group or a checkbox group; any other shared name is ambiguous and left out.
   */
  function collectFields(form) {
    const groups = new Map();
    for (const control of controlsOf(form).filter(isDataControl)) {
      groups.set(control.name, [...(groups.get(control.name) || []), control]);
    }
    return Array.from(groups, ([name, controls]) => ({ name, controls, kind: fieldKind(controls) }))
      .filter((field) => field.kind !== null)
      .map((field) => ({ ...field, schema: fieldSchema(field.kind, field.controls) }));
  }

  function isDataControl(control) {
    const tag = control.tagName;
    if (!['INPUT', 'SELECT', 'TEXTAREA'].includes(tag) || !control.name || (tag === 'INPUT' && NOT_DATA.has(control.type))) {
      return false;
    }
    const readonlyApplies = tag === 'TEXTAREA' || (tag === 'INPUT' && READONLY_TYPES.has(control.type));
    return !control.matches(':disabled') && !(readonlyApplies && control.hasAttribute('readonly'));
  }

  function fieldKind(controls) {
    const [first] = controls;
    const type = first.tagName === 'INPUT' ? first.type : first.tagName;
    if (type === 'radio' || type === 'checkbox') {
      if (!controls.every((control) => control.tagName === 'INPUT' && control.type === type)) {
        return null;
      }
      return type === 'radio' ? 'radio' : controls.length === 1 ? 'checkbox' : 'checkbox-group';
    }
    if (controls.length !== 1) {
      return null;
    }
    if (type === 'SELECT') {
      return first.multiple ? 'select-multiple' : 'select';
    }
    return ['number', 'range', 'date'].includes(type) || FORMAT_PATTERNS[type] ? type : 'text';
  }

  // Key order follows Chromium: type, constraints, anyOf, enum, description last.
  function fieldSchema(kind, controls) {
    const [control] = controls;
    const options = () => Array.from(control.options, (option) => [option.value, option.textContent]);
    const labelled = () => controls.map((choice) => [choice.value, labelText(choice) || null]);
    let schema;
    if (kind === 'checkbox') {
      schema = { type: 'boolean' };
    } else if (kind === 'radio' || kind === 'select') {
      schema = choiceSchema(kind === 'radio' ? labelled() : options());
    } else if (kind === 'checkbox-group' || kind === 'select-multiple') {
      schema = { type: 'array', items: choiceSchema(kind === 'checkbox-group' ? labelled() : options()),
        uniqueItems: true };
    } else if (kind === 'number' || kind === 'range') {
      schema = numberSchema(control, kind === 'range');
    } else if (kind === 'date') {
      schema = { type: 'string', format: 'date' };
    } else if (kind === 'time' || kind === 'datetime-local') {
      schema = { type: 'string', format: FORMAT_PATTERNS[kind] + secondsPattern(control) };
    } else if (FORMAT_PATTERNS[kind]) {
      schema = { type: 'string', format: FORMAT_PATTERNS[kind] };
    } else {
      schema = { type: 'string' };
      if (control.tagName === 'INPUT' && control.hasAttribute('pattern')) {
        schema.pattern = control.getAttribute('pattern');
      }
    }
    // A group (several radios or checkboxes) has no description; one control has its own.
    if (kind === 'checkbox-group') {
      return schema;
    }
    const description = controls.length === 1 ? control.getAttribute('toolparamdescription') || labelText(control) : '';
    if (kind === 'date') {
      schema.description = description ? `${description} (${DATE_HINT})` : DATE_HINT;
    } else if (description) {
      schema.description = description;
    }
    return schema;
  }

  /**
   * `anyOf` of `{type, const, title}` plus the plain `enum`. An option's title is its text, even
   * empty; a radio or checkbox has a title only when its label text is not empty (title null).
   */
  function choiceSchema(choices) {
    const anyOf = choices.map(([value, title]) => (title === null ? { type: 'string', const: value }
      : { type: 'string', const: value, title }));
    return { type: 'string', anyOf, enum: choices.map(([value]) => value) };
  }

  /**
   * Number and range limits; a range always has them (defaults 0 and 100, the maximum never below
   * the minimum). `multipleOf` is the step (default 1), given only when the step base (min, else
   * the value attribute, else 0) is itself a multiple of it, so the schema allows exactly the
   * control's valid values. `step="any"` drops it for numbers; Chromium keeps the default for ranges.
   */
  function numberSchema(control, isRange) {
    const schema = { type: 'number' };
    const min = parseNumber(control.getAttribute('min'));
    const max = parseNumber(control.getAttribute('max'));
    if (isRange || min !== null) {
      schema.minimum = min ?? 0;
    }
    if (isRange || max !== null) {
      schema.maximum = isRange ? Math.max(min ?? 0, max ?? 100) : max;
    }
    const stepText = control.getAttribute('step');
    const parsed = parseNumber(stepText);
    const step = parsed !== null && parsed > 0 ? parsed : 1;
    const base = min ?? parseNumber(control.getAttribute('value')) ?? 0;
    const anyStep = !isRange && stepText !== null && stepText.toLowerCase() === 'any';
    if (!anyStep && Math.abs(base / step - Math.round(base / step)) < 1e-9) {
      schema.multipleOf = step;
    }
    if (!isRange && control.hasAttribute('pattern')) {
      schema.pattern = control.getAttribute('pattern');
    }
    return schema;
  }

  /** The end of a time pattern: seconds when the step (in seconds) is not whole minutes, and so on. */
  function secondsPattern(control) {
    const step = parseNumber(control.getAttribute('step'));
    if (step === null || step <= 0 || step % 60 === 0) {
      return '$';
    }
    return step % 1 === 0 ? '(:[0-5][0-9])?$' : '(:[0-5][0-9](\\.[0-9]{1,3})?)?$';
  }

  /** HTML's valid floating-point number, or null. */
  function parseNumber(text) {
    const number = text !== null && /^-?(\d+(\.\d+)?|\.\d+)([eE][-+]?\d+)?$/.test(text) ? Number(text) : NaN;
    return Number.isFinite(number) ? number : null;
  }

  /**
   * The control's labels, each as its text without labelable descendants (a control inside its
   * own label adds nothing), trimmed of ASCII whitespace only, joined by "; " (empty ones too).
   */
  function labelText(control) {
    return Array.from(control.labels || [], (label) => textWithoutControls(label)
      .replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, '')).join('; ');
  }

  function textWithoutControls(node) {
    let text = '';
    for (const child of node.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) {
        text += child.data;
      } else if (child.nodeType === Node.ELEMENT_NODE && !LABELABLE.has(child.tagName)) {
        text += textWithoutControls(child);
      }
    }
    return text;
  }

  // ---- executing: validate, fill all or nothing, submit -------------------------------------------

  /**
   * Checks every argument before touching the form, fills it (with the page's input and change
   * events), and puts every control back if the filled form fails constraint validation. Then
   * submits (toolautosubmit) or focuses the submit button and waits for the user. Resolves to the
   * respondWith value; rejects with a ToolCallError (invalid_arguments, cancelled, page_error).
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
      run.response.then((value) => run.finish(null, value === undefined ? null : value), (reason) => run.finish(
        new ToolCallError('page_error', `respondWith promise was rejected${reason && reason.message ? `: ${reason.message}` : ''}`)));
    } else if (event.defaultPrevented) {
      run.finish(new ToolCallError('page_error', "The site has a programming error: it called preventDefault() on the 'submit' "
        + 'event, without also calling respondWith() with the tool result'));
    } else {
      // The submission navigates (or targets another frame): say so while the page still runs.
      run.finish(null, { submitted: true, method: formMethod.call(event.target), action: formAction.call(event.target) });
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

  // ---- observing changes ---------------------------------------------------------------------------

  /** Calls onChange() once per mutation batch that can change a tool form. Returns disconnect(). */
  function observe(root, onChange) {
    const observer = new MutationObserver((records) => {
      if (records.some(affectsToolForm)) {
        onChange();
      }
    });
    observer.observe(root, { subtree: true, childList: true, characterData: true, attributes: true,
      attributeFilter: WATCHED });
    return () => observer.disconnect();
  }

  // Inside a tool form or a label, a control of a tool form, or a node that holds any of these.
  function affectsToolForm(record) {
    return [record.target, ...record.addedNodes, ...record.removedNodes].some((node) => {
      const element = node.nodeType === Node.ELEMENT_NODE ? node : node.parentElement;
      return element !== null && (closest.call(element, 'form[toolname], label') !== null
        || (element.form instanceof HTMLFormElement && hasAttribute.call(element.form, 'toolname'))
        || matches.call(element, 'form, [form]') || querySelector.call(element, 'form[toolname], label, [form]') !== null);
    });
  }

  // Installed when the runtime starts, before page scripts: the runtime is the first script.
  installHooks();
  return Object.freeze({ describe, execute, observe });
})();
