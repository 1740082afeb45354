// 20-voix.js — the VOIX dialect: `<tool>`, `<prop>`, `<array>`/`<dict>`, `<context>`.
//
// Owns reading VOIX elements into catalog entries and calling them. A call dispatches
// `CustomEvent('call', {detail: args})` (not bubbling, so a tool nested inside another by a
// self-closing `<tool/>` never runs its parent's handler) with a `callId` property on the event.
// Tools with a `return` attribute answer with a `return` CustomEvent on the same element; calls to
// one such tool are queued, so exactly one is outstanding and its answer cannot be mistaken for
// another's. A page that copies `callId` onto its `return` event gets stale answers (to a call
// that already timed out) ignored. Removing the element cancels its pending calls.

const VOIX_CONTAINERS = new Set(['tool', 'dict', 'array']);
const VOIX_ELEMENTS = 'tool, prop, array, dict, context';
const VOIX_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);
const voixQueues = new WeakMap(); // <tool> element -> tail of its call queue
const voixPending = new Set(); // {element, reject} of calls waiting for a `return` event
let voixCallCounter = 0;

/** The `<tool>`, `<dict>` or `<array>` a field belongs to (its nearest such ancestor). */
function voixOwner(element) {
  let parent = element.parentElement;
  while (parent && !VOIX_CONTAINERS.has(parent.localName)) {
    parent = parent.parentElement;
  }
  return parent;
}

function voixOwned(container, selector) {
  return Array.from(container.querySelectorAll(selector)).filter((field) => voixOwner(field) === container);
}

/** An object schema from the `<prop>` and `<array>` fields a `<tool>` or `<dict>` owns. */
function voixObjectSchema(container) {
  const schema = { type: 'object', properties: {}, required: [] };
  for (const field of voixOwned(container, 'prop, array')) {
    const name = field.getAttribute('name');
    if (!name || Object.prototype.hasOwnProperty.call(schema.properties, name)) {
      continue;
    }
    schema.properties[name] = field.localName === 'array' ? voixArraySchema(field) : voixPropSchema(field);
    if (field.hasAttribute('required')) {
      schema.required.push(name);
    }
  }
  return schema;
}

function voixType(element, fallback) {
  const type = (element.getAttribute('type') || '').trim().toLowerCase();
  return VOIX_TYPES.has(type) ? type : fallback;
}

function withDescription(schema, element) {
  const description = (element.getAttribute('description') || '').trim();
  if (description) {
    schema.description = description;
  }
  return schema;
}

function voixPropSchema(prop) {
  return withDescription({ type: voixType(prop, 'string') }, prop);
}

/** `<array name>` of `<dict>` is an array of objects; without a `<dict>`, of its `type` (string). */
function voixArraySchema(array) {
  const dicts = voixOwned(array, 'dict');
  let items;
  if (dicts.length === 0) {
    items = { type: voixType(array, 'string') };
  } else {
    items = { type: 'object', properties: {}, required: [] };
    for (const dict of dicts) {
      const part = voixObjectSchema(dict);
      for (const [name, property] of Object.entries(part.properties)) {
        if (!Object.prototype.hasOwnProperty.call(items.properties, name)) {
          items.properties[name] = property;
        }
      }
      items.required.push(...part.required.filter((name) => !items.required.includes(name)));
    }
  }
  return withDescription({ type: 'array', items }, array);
}

function voixTool(element) {
  return {
    key: element,
    name: (element.getAttribute('name') || '').trim(),
    description: (element.getAttribute('description') || '').trim(),
    input_schema: voixObjectSchema(element),
    annotations: NO_ANNOTATIONS,
    source: 'voix',
    isDisabled: () => element.hasAttribute('disabled'),
    invoke: (args, { signal }) => voixInvoke(element, args, signal),
  };
}

function voixContext(element) {
  return {
    key: element,
    name: (element.getAttribute('name') || '').trim(),
    source: 'voix',
    read: () => (element.textContent || '').trim(),
  };
}

function dispatchVoixCall(element, args, callId) {
  const event = new CustomEvent('call', { detail: args, bubbles: false });
  Object.defineProperty(event, 'callId', { value: callId, enumerable: true });
  element.dispatchEvent(event);
}

function voixInvoke(element, args, signal) {
  voixCallCounter += 1;
  const callId = `voix-${voixCallCounter}`;
  if (!element.hasAttribute('return')) {
    dispatchVoixCall(element, args, callId);
    return { dispatched: true };
  }
  const previous = voixQueues.get(element) || Promise.resolve();
  const call = previous.then(() => awaitVoixReturn(element, args, callId, signal));
  voixQueues.set(element, call.then(() => undefined, () => undefined));
  return call;
}

function awaitVoixReturn(element, args, callId, signal) {
  // A call whose caller already gave up (timed out while queued) never reaches the page.
  if (signal.aborted) {
    return Promise.reject(signal.reason);
  }
  if (element.hasAttribute('disabled')) {
    return Promise.reject(new ToolCallError('disabled', 'the tool was disabled before it ran'));
  }
  if (!element.isConnected) {
    return Promise.reject(new ToolCallError('cancelled', 'the tool was removed from the page'));
  }
  return new Promise((resolve, reject) => {
    const pending = { element, reject: (error) => finish(() => reject(error)) };
    const onReturn = (event) => {
      if (event.target !== element || (event.callId !== undefined && event.callId !== callId)) {
        return;
      }
      const detail = event.detail;
      if (detail && typeof detail === 'object' && detail.success === false) {
        const message = typeof detail.error === 'string' ? detail.error : JSON.stringify(detail.error ?? 'failed');
        finish(() => reject(new ToolCallError('page_error', message)));
      } else {
        finish(() => resolve(detail === undefined ? null : detail));
      }
    };
    const onAbort = () => finish(() => reject(signal.reason));
    function finish(settle) {
      element.removeEventListener('return', onReturn);
      signal.removeEventListener('abort', onAbort);
      voixPending.delete(pending);
      settle();
    }
    element.addEventListener('return', onReturn);
    signal.addEventListener('abort', onAbort, { once: true });
    voixPending.add(pending);
    dispatchVoixCall(element, args, callId);
  });
}

function touchesVoix(record) {
  const target = record.target.nodeType === Node.ELEMENT_NODE ? record.target : record.target.parentElement;
  if (target && target.closest && target.closest('tool, context')) {
    return true;
  }
  for (const node of [...record.addedNodes, ...record.removedNodes]) {
    if (node.nodeType === Node.ELEMENT_NODE && (node.matches(VOIX_ELEMENTS) || node.querySelector(VOIX_ELEMENTS))) {
      return true;
    }
  }
  return false;
}

addProvider({
  collect() {
    return {
      tools: Array.from(document.querySelectorAll('tool')).map(voixTool),
      contexts: Array.from(document.querySelectorAll('context')).map(voixContext),
    };
  },
});

onMutations((records) => {
  if (!records.some(touchesVoix)) {
    return;
  }
  for (const pending of Array.from(voixPending)) {
    if (!pending.element.isConnected) {
      pending.reject(new ToolCallError('cancelled', 'the tool was removed from the page'));
    }
  }
  scheduleRescan();
});
