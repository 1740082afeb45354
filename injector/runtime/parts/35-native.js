// 35-native.js — native WebMCP and the tool-form provider.
//
// Owns wrapping a native implementation: the browser's `document.modelContext` or
// `navigator.modelContext` is read before the polyfills (30-webmcp.js) replace it, and an
// imperative tool is registered with it only while the gateway has it visible (withdrawn when it
// is hidden, changed or unregistered), so a hidden tool never reaches a native agent. Also owns
// the tool forms: with native WebMCP they are executed through the native `executeTool()` and
// described by the native `getTools()` once it lists them (by the runtime until then); without
// it, through `DeclarativeForms` (see 40-forms.js and 45-forms-execute.js). Either way a form's
// result is Chromium's `executeTool()` text (null for a submission that navigated).

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
// Whether nativeFormTools was asked for while the document was still being parsed. Chromium lists
// what it has at a rendering update, which can come mid-parse: a form cut short (no fields yet,
// half its options) has an entry that no longer describes it. Such a list is not used: catalogs
// are only built once the document is parsed (90-start.js), where the runtime's own description
// of the whole form stands in until a list asked for after parsing answers.
let nativeFormsReadWhileParsing = false;
let nativeRefreshing = false;
let nativeRefreshAgain = false;

/**
 * Called once the polyfills are installed. With native WebMCP: keeps its tool forms fresh and
 * announces their executions on the polyfill. Both ways: rescans when a tool form changes.
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
    if (document.readyState === 'loading') {
      document.addEventListener('DOMContentLoaded', refreshNativeForms, { once: true });
    }
  }
  if (typeof DeclarativeForms !== 'undefined') {
    DeclarativeForms.observe(document, nativeDocumentContext ? refreshNativeForms : scheduleRescan);
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

function refreshNativeForms() {
  if (nativeRefreshing) {
    nativeRefreshAgain = true;
    return;
  }
  nativeRefreshing = true;
  const parsing = document.readyState === 'loading';
  Promise.resolve()
    .then(() => nativeDocumentContext.getTools())
    .then((tools) => {
      nativeFormTools = (Array.isArray(tools) ? tools : [])
        .filter((tool) => tool && !forwarded.has(tool.name) && toolForm(tool.name) !== null);
      nativeFormsReadWhileParsing = parsing;
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
 * The catalog tools of the page's tool forms. Without native WebMCP, `DeclarativeForms`
 * describes and runs them. With it, the browser runs them, and a form's entry is Chromium's once
 * its `getTools()` lists the form; Chromium lists a parser-inserted form only after the first
 * rendering update, so until then the runtime's own derivation (the same, see 40-forms.js)
 * stands in, and the page's `getTools()` has its forms when the document is parsed either way.
 */
function formTools() {
  if (typeof DeclarativeForms === 'undefined') {
    return [];
  }
  const conflicts = conflictedNames();
  const forms = Array.from(document.querySelectorAll('form[toolname]'))
    .filter((form) => !conflicts.has(form.getAttribute('toolname')));
  if (!nativeDocumentContext) {
    return forms.map((form) => describedFormTool(form, (args, { signal }) => DeclarativeForms.execute(form, args,
      { signal }))).filter(Boolean);
  }
  const listed = new Map(nativeFormsReadWhileParsing ? [] : nativeFormTools.map((tool) => [tool.name, tool]));
  return forms.filter((form) => toolForm(form.getAttribute('toolname')) === form).map((form) => {
    const name = form.getAttribute('toolname');
    const invoke = (args, { signal }) => nativeFormEntry(name, signal)
      .then((tool) => nativeDocumentContext.executeTool(tool, args, { signal }));
    return listed.has(name) ? nativeFormTool(listed.get(name), form, invoke) : describedFormTool(form, invoke);
  }).filter(Boolean);
}

/** The runtime's own description of a tool form, or null (a warning when describing failed). */
function describeForm(form) {
  try {
    return DeclarativeForms.describe(form);
  } catch (error) {
    warn('a tool form could not be described', String(error && error.message));
    return null;
  }
}

function describedFormTool(form, invoke) {
  const described = describeForm(form);
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
    invoke,
    readResult: readFormResult,
    resultText: (text) => text,
  };
}

function nativeFormTool(tool, form, invoke) {
  const hints = tool.annotations || {};
  return {
    key: form,
    name: tool.name,
    title: tool.title || undefined,
    description: tool.description || '',
    input_schema: nativeFormSchema(form, tool.inputSchema),
    annotations: {
      read_only: Boolean(hints.readOnlyHint),
      consequential: Boolean(hints.consequentialHint),
      untrusted_content: Boolean(hints.untrustedContentHint),
    },
    source: formSource(form),
    invoke,
    readResult: readFormResult,
    resultText: (text) => text,
  };
}

/**
 * A form's schema with native WebMCP. A form the proxy made a tool of carries the gateway's
 * limits (the control's length limits, the rule's schema fragment), which the browser's own
 * derivation does not know: its schema is ours. A page's own form keeps Chromium's, except that
 * ours stays while the two are the same JSON (key order aside), so the catalog (and its decision)
 * does not change when Chromium lists a form the runtime described first.
 */
function nativeFormSchema(form, nativeSchema) {
  const derived = describeForm(form);
  if (derived && (formSource(form) === 'form' || canonicalJson(derived.input_schema) === canonicalJson(nativeSchema))) {
    return derived.input_schema;
  }
  return nativeSchema || jsonClone(EMPTY_OBJECT_SCHEMA);
}

function canonicalJson(value) {
  return JSON.stringify(value, (key, item) => (item && typeof item === 'object' && !Array.isArray(item)
    ? Object.fromEntries(Object.keys(item).sort().map((name) => [name, item[name]]))
    : item));
}

/**
 * Native `getTools()`'s entry for the tool form `name`, which native `executeTool()` needs. A
 * call that comes before Chromium lists the form waits for its `toolchange`; the call's signal
 * (timeout, cancellation) ends the wait.
 */
function nativeFormEntry(name, signal) {
  return new Promise((resolve, reject) => {
    const look = () => {
      Promise.resolve()
        .then(() => nativeDocumentContext.getTools())
        .then((tools) => {
          const tool = Array.isArray(tools) ? tools.find((candidate) => candidate && candidate.name === name) : null;
          if (tool) {
            stop();
            resolve(tool);
          }
        }, (error) => {
          stop();
          reject(error);
        });
    };
    const cancelled = () => {
      stop();
      reject(signal.reason);
    };
    const stop = () => {
      nativeDocumentContext.removeEventListener('toolchange', look);
      signal.removeEventListener('abort', cancelled);
    };
    nativeDocumentContext.addEventListener('toolchange', look);
    signal.addEventListener('abort', cancelled, { once: true });
    look();
  });
}

/**
 * A form tool's result as the runtime's calls report it: Chromium's `executeTool()` text (what
 * both ways of running a form resolve to) read back as JSON where it is JSON; null when the
 * submission navigated or the page answered `undefined`. Other text stays a string.
 */
function readFormResult(text) {
  if (text === null || text === undefined || text === 'undefined') {
    return null;
  }
  if (typeof text !== 'string') {
    return jsonClone(text);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    return text;
  }
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
