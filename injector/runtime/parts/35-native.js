// 35-native.js — native WebMCP and the tool-form provider.
//
// Owns wrapping a native implementation: the browser's `document.modelContext` or
// `navigator.modelContext` is read before the polyfills (30-webmcp.js) replace it, and an
// imperative tool is registered with it only while the gateway has it visible (withdrawn when it
// is hidden, changed or unregistered), so a hidden tool never reaches a native agent. Also owns
// the tool forms: with native WebMCP they are read from the native `getTools()` and executed
// through the native `executeTool()`; without it, through `DeclarativeForms` (see 40-forms.js
// and 45-forms-execute.js).

function readNative(read) {
  try {
    const value = read();
    return value && typeof value.registerTool === 'function' ? value : null;
  } catch (error) {
    return null;
  }
}

// Read before the polyfills replace them: these are the browser's (or an earlier script's) own.
const nativeDocumentContext = readNative(() => document.modelContext);
const nativeNavigatorContext = readNative(() => navigator.modelContext);

// ---- forwarding visible registrations to a native implementation -------------------------------

const forwarded = new Map(); // catalog name -> {fingerprint, withdraw()}

function forwardToNative(definition) {
  if (nativeDocumentContext) {
    const controller = new AbortController();
    Promise.resolve()
      .then(() => nativeDocumentContext.registerTool(definition, { signal: controller.signal }))
      .catch((error) => warn(`native WebMCP refused ${definition.name}`, String(error && error.message)));
    return () => controller.abort();
  }
  try {
    nativeNavigatorContext.registerTool(definition);
  } catch (error) {
    warn(`native WebMCP refused ${definition.name}`, String(error && error.message));
    return () => {};
  }
  return () => {
    try {
      nativeNavigatorContext.unregisterTool(definition.name);
    } catch (error) {
      warn(`native WebMCP kept ${definition.name}`, String(error && error.message));
    }
  };
}

function syncNative() {
  if (!nativeDocumentContext && !nativeNavigatorContext) {
    return;
  }
  const wanted = new Map(visibleTools()
    .filter((entry) => entry.raw.source === 'webmcp_imperative')
    .map((entry) => [entry.name, entry]));
  for (const [name, copy] of forwarded) {
    if (wanted.get(name)?.fingerprint !== copy.fingerprint) {
      copy.withdraw();
      forwarded.delete(name);
    }
  }
  for (const [name, entry] of wanted) {
    if (forwarded.has(name)) {
      continue;
    }
    const tool = describeTool(entry.raw, name);
    const definition = {
      name,
      description: tool.description,
      inputSchema: jsonClone(tool.input_schema),
      annotations: {
        readOnlyHint: tool.annotations.read_only,
        untrustedContentHint: tool.annotations.untrusted_content,
        consequentialHint: tool.annotations.consequential,
      },
      // A native agent's call goes through the same checks as any other.
      execute: (args, options) => callTool(name, args, { signal: options && options.signal }).then((outcome) => {
        if (!outcome.ok) {
          throw new Error(`${outcome.error.code}: ${outcome.error.message}`);
        }
        return outcome.result;
      }),
    };
    if (tool.title) {
      definition.title = tool.title;
    }
    forwarded.set(name, { fingerprint: entry.fingerprint, withdraw: forwardToNative(definition) });
  }
}

// ---- tool forms -----------------------------------------------------------------------------------

let nativeFormTools = []; // the native getTools() entries that belong to a <form toolname>
let nativeRefreshing = false;
let nativeRefreshAgain = false;

/**
 * Called once the polyfills are installed. With native WebMCP: keeps its tool forms fresh and
 * announces their executions on the polyfill. Without it: lets `DeclarativeForms` watch the forms.
 */
function connectToolForms() {
  if (nativeDocumentContext) {
    nativeDocumentContext.addEventListener('toolchange', refreshNativeForms);
    // The page listens on the polyfill; a native form execution is announced there too (a
    // forwarded imperative tool announces its own, from ToolOwner.run).
    for (const type of ['toolactivated', 'toolcancel']) {
      nativeDocumentContext.addEventListener(type, (event) => {
        if (!forwarded.has(event.toolName)) {
          fireToolEvent(documentModelContext, type, event.toolName);
        }
      });
    }
    refreshNativeForms();
  } else if (typeof DeclarativeForms !== 'undefined') {
    DeclarativeForms.observe(document, scheduleRescan);
  }
}

function toolForm(name) {
  for (const form of document.querySelectorAll('form[toolname]')) {
    if (form.getAttribute('toolname') === name) {
      return form;
    }
  }
  return null;
}

/** `form` when the proxy turned a legacy form into a tool, otherwise the page's own declaration. */
function formSource(form) {
  return form.getAttribute('data-toolgate-source') === 'form' ? 'form' : 'webmcp_declarative';
}

function parseNativeResult(text) {
  if (typeof text !== 'string') {
    return text ?? null;
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    return text;
  }
}

function refreshNativeForms() {
  if (nativeRefreshing) {
    nativeRefreshAgain = true;
    return;
  }
  nativeRefreshing = true;
  Promise.resolve()
    .then(() => nativeDocumentContext.getTools())
    .then((tools) => {
      nativeFormTools = (Array.isArray(tools) ? tools : [])
        .filter((tool) => tool && !forwarded.has(tool.name) && toolForm(tool.name) !== null);
    }, (error) => warn('native WebMCP getTools() failed', String(error && error.message)))
    .then(() => {
      nativeRefreshing = false;
      if (nativeRefreshAgain) {
        nativeRefreshAgain = false;
        refreshNativeForms();
      }
      scheduleRescan();
    });
}

/**
 * A form the proxy made a tool of carries the gateway's limits (the control's length limits, the
 * rule's schema fragment), which the browser's own derivation does not know: its schema is ours.
 */
function generatedFormSchema(form) {
  if (!form || formSource(form) !== 'form') {
    return null;
  }
  try {
    const described = DeclarativeForms.describe(form);
    return described ? described.input_schema : null;
  } catch {
    return null;
  }
}

function nativeFormTool(tool) {
  const form = toolForm(tool.name);
  const hints = tool.annotations || {};
  return {
    key: form,
    name: tool.name,
    title: tool.title || undefined,
    description: tool.description || '',
    input_schema: generatedFormSchema(form) || tool.inputSchema || jsonClone(EMPTY_OBJECT_SCHEMA),
    annotations: {
      read_only: Boolean(hints.readOnlyHint),
      consequential: Boolean(hints.consequentialHint),
      untrusted_content: Boolean(hints.untrustedContentHint),
    },
    source: formSource(form),
    invoke: (args, { signal }) => nativeDocumentContext.executeTool(tool, args, { signal }).then(parseNativeResult),
  };
}

function polyfilledFormTool(form) {
  let described = null;
  try {
    described = DeclarativeForms.describe(form);
  } catch (error) {
    warn('a tool form could not be described', String(error && error.message));
  }
  if (!described) {
    return null;
  }
  return {
    key: form,
    name: described.name,
    title: described.title,
    description: described.description,
    input_schema: described.input_schema,
    annotations: described.annotations,
    source: formSource(form),
    invoke: (args, { signal }) => DeclarativeForms.execute(form, args, { signal }),
  };
}

function formTools() {
  const conflicts = conflictedNames();
  if (nativeDocumentContext) {
    return nativeFormTools.filter((tool) => toolForm(tool.name) !== null && !conflicts.has(tool.name))
      .map(nativeFormTool);
  }
  if (typeof DeclarativeForms === 'undefined') {
    return [];
  }
  return Array.from(document.querySelectorAll('form[toolname]'))
    .filter((form) => !conflicts.has(form.getAttribute('toolname')))
    .map(polyfilledFormTool).filter(Boolean);
}

const warnedConflicts = new Set(); // names already warned about: catalogs are rebuilt often

/**
 * Names the proxy gave to more than one form on the page: a site's form rule that matched two
 * forms. Which one the rule was written for cannot be told, so neither is offered (a clash
 * suffix would hand the agent a tool its author never described).
 */
function conflictedNames() {
  const seen = new Map();
  for (const form of document.querySelectorAll('form[toolname]')) {
    if (formSource(form) === 'form') {
      const name = form.getAttribute('toolname');
      seen.set(name, (seen.get(name) || 0) + 1);
    }
  }
  const conflicts = new Set(Array.from(seen).filter(([, count]) => count > 1).map(([name]) => name));
  const fresh = Array.from(conflicts).filter((name) => !warnedConflicts.has(name));
  if (fresh.length > 0) {
    fresh.forEach((name) => warnedConflicts.add(name));
    warn('form tools offered by no form: a rule matched several forms', fresh.join(', '));
  }
  return conflicts;
}

function touchesToolForm(record) {
  const target = record.target.nodeType === Node.ELEMENT_NODE ? record.target : record.target.parentElement;
  if (target && target.closest && target.closest('form[toolname]')) {
    return true;
  }
  if (record.type === 'attributes' && record.attributeName === 'toolname') {
    return true;
  }
  return [...record.addedNodes, ...record.removedNodes].some((node) => node.nodeType === Node.ELEMENT_NODE
    && (node.matches('form[toolname]') || node.querySelector('form[toolname]')));
}

onMutations((records) => {
  if (nativeDocumentContext && records.some(touchesToolForm)) {
    refreshNativeForms();
  }
});
