// 50-ci4a.js — the CI4A component registry, `window.__ci4a__`.
//
// Owns the registry components use to offer tools and a state view: each component's tools
// become catalog tools `<id>.<tool>` (source `component`) and its state view the context
// `<id>.state`. Components that queued themselves before the runtime ran
// (`(window.__ci4a__ = window.__ci4a__ || []).push(component)`) are registered on start, and the
// queue idiom keeps working afterwards. A component whose root element leaves the document is
// unregistered. The API is documented in injector/runtime/README.md.

const COMPONENT_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const COMPONENT_TOOL_PATTERN = /^[A-Za-z0-9_-]{1,63}$/;
const components = new Map(); // id -> record

function componentError(message) {
  return new TypeError(`__ci4a__.register: ${message}`);
}

/** Checks a component description and turns it into a registry record, or throws a TypeError. */
function componentRecord(component) {
  if (!component || typeof component !== 'object') {
    throw componentError('a component object is required');
  }
  const id = component.id;
  if (typeof id !== 'string' || !COMPONENT_ID_PATTERN.test(id)) {
    throw componentError(`id must match ${COMPONENT_ID_PATTERN}, got ${JSON.stringify(id)}`);
  }
  if (components.has(id)) {
    throw componentError(`a component with id ${id} is already registered`);
  }
  const root = component.root;
  if (!(root instanceof Element) || root.getAttribute('data-cid') !== id) {
    throw componentError(`root must be an element with data-cid="${id}"`);
  }
  if (component.state !== undefined && typeof component.state !== 'function') {
    throw componentError('state must be a function returning a JSON view');
  }
  const record = {
    id,
    root,
    description: typeof component.description === 'string' ? component.description : '',
    metadata: component.metadata === undefined ? undefined : jsonClone(component.metadata),
    state: component.state,
    wasConnected: root.isConnected,
    tools: [],
  };
  const tools = component.tools && typeof component.tools === 'object' ? component.tools : {};
  for (const [toolName, tool] of Object.entries(tools)) {
    if (!COMPONENT_TOOL_PATTERN.test(toolName)) {
      throw componentError(`tool name ${JSON.stringify(toolName)} must match ${COMPONENT_TOOL_PATTERN}`);
    }
    if (!tool || typeof tool.execute !== 'function') {
      throw componentError(`tool ${toolName} needs an execute(args, {signal}) function`);
    }
    record.tools.push(componentTool(record, toolName, tool));
  }
  record.context = {
    key: record,
    name: `${id}.state`,
    source: 'component',
    read: () => componentStateText(record),
  };
  return record;
}

function componentTool(record, toolName, tool) {
  const schema = tool.input_schema === undefined ? { type: 'object', properties: {} } : tool.input_schema;
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) {
    throw componentError(`tool ${toolName}: input_schema must be an object`);
  }
  const hints = tool.annotations && typeof tool.annotations === 'object' ? tool.annotations : {};
  return {
    key: {}, // this registration's own identity (an adapter may share one tool object)
    name: `${record.id}.${toolName}`,
    title: typeof tool.title === 'string' ? tool.title : undefined,
    description: typeof tool.description === 'string' ? tool.description : '',
    input_schema: jsonClone(schema),
    annotations: {
      read_only: Boolean(hints.read_only),
      consequential: Boolean(hints.consequential),
      untrusted_content: Boolean(hints.untrusted_content),
    },
    source: 'component',
    isDisabled: () => typeof tool.disabled === 'function' && tool.disabled() === true,
    invoke: (args, { signal }) => Promise.resolve()
      .then(() => tool.execute(args, { signal, root: record.root }))
      .finally(scheduleRescan),
  };
}

function componentStateText(record) {
  const view = { component: record.id };
  if (record.description) {
    view.description = record.description;
  }
  if (record.metadata !== undefined) {
    view.metadata = record.metadata;
  }
  try {
    view.state = record.state ? jsonClone(record.state()) : null;
  } catch (error) {
    view.state = null;
    view.error = 'the state view is unavailable';
  }
  return JSON.stringify(view);
}

function registerComponent(component) {
  const record = componentRecord(component);
  components.set(record.id, record);
  scheduleRescan();
  return () => unregisterComponent(record.id, record);
}

function unregisterComponent(id, record) {
  if (components.has(id) && (record === undefined || components.get(id) === record)) {
    components.delete(id);
    scheduleRescan();
    return true;
  }
  return false;
}

const componentRegistry = Object.freeze({
  version: 1,
  register: registerComponent,
  unregister: (id) => unregisterComponent(String(id)),
  /** Tells the runtime a component's state view (or its tools' `disabled()`) changed. */
  changed: () => scheduleRescan(),
  /** The queue idiom: `push(component, …)` registers each, logging (not throwing) failures. */
  push: (...queued) => {
    for (const component of queued) {
      try {
        registerComponent(component);
      } catch (error) {
        warn(error.message);
      }
    }
    return components.size;
  },
  list: () => Array.from(components.values(), (record) => ({
    id: record.id,
    description: record.description,
    tools: record.tools.map((tool) => tool.name),
  })),
});

function installComponentRegistry() {
  const queued = Array.isArray(window.__ci4a__) ? window.__ci4a__.slice() : [];
  try {
    // An accessor, so the queue idiom `window.__ci4a__ = window.__ci4a__ || []` also works in
    // strict code: assigning the registry is a no-op, assigning an array registers its items.
    Object.defineProperty(window, '__ci4a__', {
      get: () => componentRegistry,
      set: (value) => {
        if (Array.isArray(value)) {
          componentRegistry.push(...value);
        }
      },
      enumerable: true,
      configurable: false,
    });
  } catch (error) {
    // A page-declared `var __ci4a__ = []` cannot be replaced; its push() is taken over instead.
    if (Array.isArray(window.__ci4a__)) {
      window.__ci4a__.push = componentRegistry.push;
    } else {
      warn('cannot install window.__ci4a__', String(error && error.message));
    }
  }
  componentRegistry.push(...queued);
}

addProvider({
  collect() {
    const tools = [];
    const contexts = [];
    for (const record of components.values()) {
      tools.push(...record.tools);
      contexts.push(record.context);
    }
    return { tools, contexts };
  },
});

// A component whose root was in the document and left it is gone (its framework unmounted it).
onMutations((records) => {
  if (!records.some((record) => record.removedNodes.length > 0 || record.addedNodes.length > 0)) {
    return;
  }
  for (const record of Array.from(components.values())) {
    if (record.root.isConnected) {
      record.wasConnected = true;
    } else if (record.wasConnected) {
      unregisterComponent(record.id, record);
    }
  }
});
