// 40-forms.js — WebMCP declarative forms: the tool a `<form toolname tooldescription [tooltitle]
// [toolautosubmit]>` declares.
//
// Owns, for browsers without native WebMCP, `describe(form)`: the tool and its input schema
// derived exactly the way Chromium's native implementation does (the differential test in
// gateway/tests/it/forms.rs holds us to that), and `observe(root, onChange)`, which reports the
// changes that can alter a derived tool. Execution (45-forms-execute.js) builds on `formDerivation`
// and defines `DeclarativeForms`.

const formDerivation = (() => {
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
  const LABELABLE = new Set(['BUTTON', 'INPUT', 'METER', 'OUTPUT', 'PROGRESS', 'SELECT', 'TEXTAREA']);
  // The attributes a derived tool depends on; `observe` ignores all others.
  const WATCHED = ['toolname', 'tooldescription', 'tooltitle', 'toolautosubmit', 'toolparamdescription', 'name',
    'type', 'disabled', 'readonly', 'required', 'min', 'max', 'step', 'pattern', 'value', 'multiple', 'for',
    'id', 'form'];

  // A control named "elements" or "hasAttribute" shadows the form's own member (forms have
  // [LegacyOverrideBuiltIns]), so a form's members are always taken from the prototypes.
  const formElements = Object.getOwnPropertyDescriptor(HTMLFormElement.prototype, 'elements').get;
  const { getAttribute, hasAttribute, matches, closest, querySelector } = Element.prototype;
  const attr = (element, name) => getAttribute.call(element, name);
  const controlsOf = (form) => Array.from(formElements.call(form));

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
    const fields = collectFields(form, form.getAttribute('data-toolgate-source') === 'form');
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
  function collectFields(form, generated) {
    const groups = new Map();
    for (const control of controlsOf(form).filter(isDataControl)) {
      groups.set(control.name, [...(groups.get(control.name) || []), control]);
    }
    return Array.from(groups, ([name, controls]) => ({ name, controls, kind: fieldKind(controls) }))
      .filter((field) => field.kind !== null)
      .map((field) => ({ ...field, schema: fieldSchema(field.kind, field.controls, generated) }));
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

  // Key order follows Chromium: type, constraints, anyOf, enum, description last. A form the
  // gateway made a tool of (`generated`, from a site's form rule or auto mode) also carries the
  // control's own length limits and the rule's schema fragment; pages' own declarative forms
  // keep exactly Chromium's derivation.
  function fieldSchema(kind, controls, generated) {
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
    if (generated && controls.length === 1) {
      addLengthLimits(schema, control);
      mergeRuleFragment(schema, control.getAttribute('data-toolgate-schema'));
    }
    // A group (several radios or checkboxes) has no description; one control has its own.
    if (kind === 'checkbox-group') {
      return schema;
    }
    const description = controls.length === 1 ? control.getAttribute('toolparamdescription') || labelText(control) : '';
    if (kind === 'date' || (kind === 'text' && schema.format === 'date')) {
      schema.description = description ? `${description} (${DATE_HINT})` : DATE_HINT;
    } else if (description) {
      schema.description = description;
    }
    return schema;
  }

  /** `maxlength` and `minlength` of a text control, as the browser enforces them on a user. */
  function addLengthLimits(schema, control) {
    if (schema.type !== 'string' || schema.anyOf) {
      return;
    }
    for (const [attribute, keyword] of [['minlength', 'minLength'], ['maxlength', 'maxLength']]) {
      const value = parseNumber(control.getAttribute(attribute));
      if (value !== null && value >= 0 && Number.isInteger(value)) {
        schema[keyword] = value;
      }
    }
  }

  /** The keywords of the rule's fragment (JSON written by the gateway) that fit the schema's type. */
  function mergeRuleFragment(schema, text) {
    if (!text) {
      return;
    }
    let fragment;
    try {
      fragment = JSON.parse(text);
    } catch {
      return;
    }
    if (fragment === null || typeof fragment !== 'object' || Array.isArray(fragment)) {
      return;
    }
    const strings = ['format', 'pattern'];
    const numbers = schema.type === 'number' ? ['minimum', 'maximum'] : ['minLength', 'maxLength'];
    for (const keyword of strings.filter(() => schema.type === 'string')) {
      if (typeof fragment[keyword] === 'string') {
        schema[keyword] = fragment[keyword];
      }
    }
    for (const keyword of numbers) {
      if (typeof fragment[keyword] === 'number') {
        schema[keyword] = fragment[keyword];
      }
    }
    if (Array.isArray(fragment.examples)) {
      schema.examples = fragment.examples;
    }
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

  return Object.freeze({ describe, observe, readForm, attr, controlsOf });
})();
