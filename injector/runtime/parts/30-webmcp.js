// 30-webmcp.js — WebMCP: the `document.modelContext` and `navigator.modelContext` polyfills.
//
// Owns the two page-facing polyfills (the current draft's `document.modelContext` and the early
// preview's `navigator.modelContext`): checking and copying registrations, running them, their
// events, and the WebMCP catalog provider. Pages always talk to the polyfill, also when the
// browser has a native implementation; 35-native.js wraps that implementation and provides the
// tool forms.

const TOOL_EVENTS = ['toolchange', 'toolactivated', 'toolcancel'];
const WEBMCP_SOURCES = new Set(['webmcp_imperative', 'webmcp_declarative', 'form']);
const EMPTY_OBJECT_SCHEMA = Object.freeze({ type: 'object', properties: {} });

function fireToolEvent(target, type, toolName) {
  const Native = type === 'toolactivated' ? window.ToolActivatedEvent
    : type === 'toolcancel' ? window.ToolCancelEvent : null;
  let event;
  try {
    event = Native ? new Native(type, { toolName }) : new Event(type);
  } catch (error) {
    event = new Event(type);
  }
  if (toolName !== undefined && event.toolName !== toolName) {
    Object.defineProperty(event, 'toolName', { value: toolName, enumerable: true });
  }
  target.dispatchEvent(event);
}

/**
 * A tool's result as Chromium's `executeTool()` gives it to a page: a string as it is, an object
 * as its JSON (one without JSON, a function say, as "undefined"), any other value as its text
 * (`undefined`, `null`, `42`, `true`, `NaN`). A form's submission that navigated gives null
 * instead (45-forms-execute.js). Throws for an object JSON cannot hold (a cycle).
 */
function webmcpText(value) {
  if (typeof value === 'string') {
    return value;
  }
  if (value !== null && (typeof value === 'object' || typeof value === 'function')) {
    const text = JSON.stringify(value);
    return text === undefined ? 'undefined' : text;
  }
  return String(value);
}

/** An imperative tool's result for `executeTool()`: Chromium words an empty string as below. */
function imperativeText(value) {
  const text = webmcpText(value);
  return text === '' ? 'Operation succeeded' : text;
}

function invalidState(message) {
  return new DOMException(message, 'InvalidStateError');
}

/** A checked, JSON-copied registration, or throws what `registerTool` must reject with. */
function registration(tool, taken) {
  if (!tool || typeof tool !== 'object') {
    throw new TypeError('registerTool() needs a tool object');
  }
  const name = String(tool.name ?? '');
  if (!NAME_PATTERN.test(name)) {
    throw invalidState(`invalid tool name ${JSON.stringify(name)}`);
  }
  if (taken(name)) {
    throw invalidState(`a tool named ${name} is already registered`);
  }
  if (typeof tool.description !== 'string' || tool.description === '') {
    throw invalidState('a tool needs a description');
  }
  if (typeof tool.execute !== 'function') {
    throw new TypeError('a tool needs an execute function');
  }
  let inputSchema = jsonClone(EMPTY_OBJECT_SCHEMA);
  if (tool.inputSchema !== undefined) {
    if (tool.inputSchema === null || typeof tool.inputSchema !== 'object') {
      throw new TypeError('inputSchema must be an object');
    }
    inputSchema = jsonClone(tool.inputSchema);
  }
  const hints = tool.annotations && typeof tool.annotations === 'object' ? tool.annotations : {};
  return {
    name,
    title: typeof tool.title === 'string' ? tool.title : undefined,
    description: tool.description,
    inputSchema,
    annotations: {
      read_only: Boolean(hints.readOnlyHint),
      consequential: Boolean(hints.consequentialHint),
      untrusted_content: Boolean(hints.untrustedContentHint),
    },
    execute: tool.execute,
  };
}

/** What the page registered through one polyfill, as catalog entries (registration order). */
class ToolOwner extends EventTarget {
  constructor() {
    super();
    this.registrations = new Map();
  }

  rawTools() {
    return Array.from(this.registrations.values(), (entry) => ({
      key: entry,
      name: entry.name,
      title: entry.title,
      description: entry.description,
      input_schema: entry.inputSchema,
      annotations: entry.annotations,
      source: 'webmcp_imperative',
      invoke: (args, { signal }) => this.run(entry, args, signal),
      resultText: imperativeText,
    }));
  }

  run(entry, args, signal) {
    fireToolEvent(this, 'toolactivated', entry.name);
    signal.addEventListener('abort', () => fireToolEvent(this, 'toolcancel', entry.name), { once: true });
    const client = { signal, requestUserInteraction: (callback) => Promise.resolve().then(callback) };
    return entry.execute.call(undefined, args, client);
  }

  add(entry) {
    this.registrations.set(entry.name, entry);
    this.changed();
  }

  remove(name, entry) {
    if (this.registrations.get(name) === entry || (entry === undefined && this.registrations.has(name))) {
      this.registrations.delete(name);
      this.changed();
    }
  }

  changed() {
    setTimeout(() => fireToolEvent(this, 'toolchange'), 0);
    scheduleRescan();
  }

  /** The visible WebMCP tools, shaped like the draft's `RegisteredTool` (sorted by name). */
  getTools() {
    return ready.then(() => this.visibleWebmcpTools());
  }

  visibleWebmcpTools() {
    const tools = visibleTools()
      .filter((entry) => WEBMCP_SOURCES.has(entry.raw.source))
      .map((entry) => {
        const tool = describeTool(entry.raw, entry.name);
        return {
          name: tool.name,
          title: tool.title ?? '',
          description: tool.description,
          inputSchema: jsonClone(tool.input_schema),
          annotations: {
            readOnlyHint: tool.annotations.read_only,
            untrustedContentHint: tool.annotations.untrusted_content,
            consequentialHint: tool.annotations.consequential,
            debugging: false,
          },
          origin: location.origin,
          window,
        };
      });
    tools.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
    return tools;
  }

  /**
   * Runs a catalog tool through the gateway's rules; resolves to its result as Chromium's
   * `executeTool()` does (webmcpText: a string as it is; null for a form that navigated).
   */
  executeTool(tool, inputObject, options) {
    const name = typeof tool === 'string' ? tool : tool && tool.name;
    const signal = options && options.signal;
    return callTool(name, inputObject === undefined ? {} : inputObject, { signal, text: true }).then((outcome) => {
      if (outcome.ok) {
        // No text: a failed call the site's answer turned into a success (45-forms-execute.js).
        return 'text' in outcome ? outcome.text : webmcpText(outcome.result);
      }
      const kind = outcome.error.code === 'cancelled' ? 'AbortError'
        : outcome.error.code === 'invalid_arguments' ? 'DataError' : 'UnknownError';
      const error = new DOMException(`${outcome.error.code}: ${outcome.error.message}`, kind);
      error.toolgate = outcome.error;
      throw error;
    });
  }
}

for (const type of TOOL_EVENTS) {
  const handlers = new WeakMap();
  Object.defineProperty(ToolOwner.prototype, `on${type}`, {
    get() {
      return handlers.get(this)?.handler ?? null;
    },
    set(handler) {
      const old = handlers.get(this);
      if (old) {
        this.removeEventListener(type, old.listener);
      }
      if (typeof handler !== 'function') {
        handlers.delete(this);
        return;
      }
      const listener = (event) => handler.call(this, event);
      handlers.set(this, { handler, listener });
      this.addEventListener(type, listener);
    },
  });
}

/** `document.modelContext`, the current draft: promise-based, unregistered by an AbortSignal. */
class ModelContext extends ToolOwner {
  registerTool(tool, options) {
    let entry;
    try {
      entry = registration(tool, (name) => this.registrations.has(name));
    } catch (error) {
      return Promise.reject(error);
    }
    const signal = options && options.signal;
    if (signal && signal.aborted) {
      return Promise.reject(signal.reason);
    }
    return new Promise((resolve, reject) => {
      if (signal) {
        signal.addEventListener('abort', () => {
          this.remove(entry.name, entry);
          reject(signal.reason);
        }, { once: true });
      }
      this.add(entry);
      setTimeout(resolve, 0);
    });
  }
}

/** `navigator.modelContext`, the early preview: synchronous, plus a replaceable provided set. */
class EarlyModelContext extends ToolOwner {
  registerTool(tool) {
    const entry = registration(tool, (name) => this.registrations.has(name));
    this.add(entry);
    return { unregister: () => this.remove(entry.name, entry) };
  }

  unregisterTool(name) {
    this.remove(String(name));
  }

  provideContext(context) {
    const tools = context && Array.isArray(context.tools) ? context.tools : [];
    const provided = new Map();
    const dynamic = Array.from(this.registrations.values()).filter((entry) => !entry.provided);
    for (const tool of tools) {
      const entry = registration(tool, (name) => provided.has(name) || dynamic.some((other) => other.name === name));
      entry.provided = true;
      provided.set(entry.name, entry);
    }
    this.registrations = new Map([...provided, ...dynamic.map((entry) => [entry.name, entry])]);
    this.changed();
  }

  clearContext() {
    this.registrations = new Map();
    this.changed();
  }
}

const documentModelContext = new ModelContext();
const navigatorModelContext = new EarlyModelContext();

function installModelContexts() {
  for (const [target, value] of [[document, documentModelContext], [navigator, navigatorModelContext]]) {
    try {
      Object.defineProperty(target, 'modelContext', { get: () => value, enumerable: true, configurable: false });
    } catch (error) {
      warn('cannot install the modelContext polyfill', String(error && error.message));
    }
  }
  connectToolForms();
}

addProvider({
  collect() {
    return { tools: [...documentModelContext.rawTools(), ...navigatorModelContext.rawTools(), ...formTools()] };
  },
});

let lastVisibleWebmcp = '';

// Forward what is visible now to a native implementation (35-native.js), then tell the page.
onCatalogChange(() => {
  syncNative();
  const signature = JSON.stringify(visibleTools()
    .filter((entry) => WEBMCP_SOURCES.has(entry.raw.source))
    .map((entry) => entry.fingerprint));
  if (signature !== lastVisibleWebmcp) {
    lastVisibleWebmcp = signature;
    fireToolEvent(documentModelContext, 'toolchange');
    fireToolEvent(navigatorModelContext, 'toolchange');
  }
});
