// 65-panel-look.js — how the agent panel looks and words things: its stylesheet, the title shown
// for each error code, and the small DOM helpers it builds with (text only ever through
// `textContent`). The panel itself (70-panel.js) owns behaviour and state.

const MAX_EXAMPLES = 4;
const EXAMPLE_CHARS = 80;

const PANEL_CSS = `
:host { all: initial !important; display: block !important; position: fixed !important;
  right: 0 !important; bottom: 0 !important; width: 0 !important; height: 0 !important;
  z-index: 2147483647 !important; visibility: visible !important; opacity: 1 !important; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
.root { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d2330;
  --accent: #2851c8; --muted: #667085; --line: #d6dae3; --danger: #b42318; --ok: #067647; }
button, textarea { font: inherit; color: inherit; }
button { cursor: pointer; border-radius: 8px; border: 1px solid var(--line); background: #fff;
  padding: 6px 10px; }
button:disabled { cursor: default; opacity: .55; }
:focus-visible { outline: 3px solid #f79009; outline-offset: 2px; }
.launcher { position: fixed; right: 16px; bottom: 16px; width: 52px; height: 52px; border-radius: 50%;
  border: 0; background: var(--accent); color: #fff; font-size: 22px; font-weight: 700;
  box-shadow: 0 4px 14px rgba(16,24,40,.3); }
.launcher[data-attention="true"] { background: #f79009; box-shadow: 0 0 0 4px rgba(247,144,9,.35); }
.panel { position: fixed; right: 16px; bottom: 80px; width: 400px; max-width: calc(100vw - 32px);
  height: 600px; max-height: calc(100vh - 100px); display: flex; flex-direction: column;
  background: #fff; border: 1px solid var(--line); border-radius: 14px;
  box-shadow: 0 12px 40px rgba(16,24,40,.25); overflow: hidden; }
header { display: flex; align-items: center; gap: 8px; padding: 10px 12px; border-bottom: 1px solid var(--line);
  background: #f6f7fb; }
header h2 { font-size: 15px; margin: 0; flex: 1; }
.who { color: var(--muted); font-size: 12px; }
.signout { font-size: 12px; color: var(--accent); }
.fresh { font-size: 12px; padding: 2px 8px; border-radius: 12px; }
.close { border: 0; background: transparent; font-size: 20px; line-height: 1; padding: 4px 8px; }
.body { flex: 1; overflow-y: auto; padding: 10px 12px; display: flex; flex-direction: column; gap: 10px; }
details { border: 1px solid var(--line); border-radius: 10px; padding: 6px 10px; }
summary { cursor: pointer; font-weight: 600; }
.entries { list-style: none; margin: 6px 0 0; padding: 0; display: flex; flex-direction: column; gap: 4px; }
.entry { display: flex; flex-wrap: wrap; gap: 2px 8px; }
.entry .kind { font-size: 11px; text-transform: uppercase; color: var(--muted); min-width: 52px; }
.entry .name { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12.5px; }
.entry[data-visible="false"] { color: #98a2b3; }
.entry[data-visible="false"] .name { text-decoration: line-through; }
.entry .reason { font-size: 12px; color: #98a2b3; flex-basis: 100%; padding-left: 60px; }
.notice { border-radius: 10px; padding: 8px 10px; background: #fffaeb; border: 1px solid #fedf89; }
.examples { display: flex; flex-wrap: wrap; gap: 6px; }
.examples button { font-size: 13px; border-radius: 16px; text-align: left; }
.log { list-style: none; margin: 0; padding: 0; display: flex; flex-direction: column; gap: 8px; }
.msg { padding: 8px 10px; border-radius: 10px; white-space: pre-wrap; overflow-wrap: anywhere; }
.msg[data-role="user"] { background: var(--accent); color: #fff; align-self: flex-end; max-width: 85%; }
.msg[data-role="assistant"] { background: #f2f4f7; align-self: flex-start; max-width: 95%; }
.msg[data-role="tool"] { font-size: 12.5px; color: var(--muted); padding: 2px 10px; }
.msg[data-role="tool"][data-status="failed"], .msg[data-role="denied"] { color: var(--danger); }
.msg[data-role="error"] { background: #fef3f2; border: 1px solid #fecdca; color: var(--danger); }
.msg[data-role="error"] strong { display: block; }
.msg[data-role="note"] { font-size: 12px; color: var(--muted); padding: 0 10px; }
.msg[data-history="true"] { opacity: .8; }
.msg[data-role="tool"][data-status="invalid"] { color: #b54708; }
.approval { border: 2px solid #f79009; border-radius: 10px; padding: 8px 10px; background: #fffcf5; }
.approval h3 { margin: 0 0 4px; font-size: 14px; }
.approval pre { margin: 6px 0; padding: 8px; background: #101828; color: #f2f4f7; border-radius: 8px;
  max-height: 220px; overflow: auto; font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, monospace;
  white-space: pre-wrap; overflow-wrap: anywhere; }
.approval .actions { display: flex; gap: 8px; }
.approval [data-action="approve"] { background: var(--ok); color: #fff; border-color: var(--ok); }
.approval [data-action="deny"] { color: var(--danger); }
.approval .status { font-weight: 600; }
.approval[data-approval-state="approved"] .status { color: var(--ok); }
.approval[data-approval-state="denied"] .status, .approval[data-approval-state="expired"] .status { color: var(--danger); }
form { display: flex; gap: 6px; padding: 10px 12px; border-top: 1px solid var(--line); align-items: flex-end; }
textarea { flex: 1; resize: none; min-height: 40px; max-height: 120px; padding: 8px; border-radius: 8px;
  border: 1px solid var(--line); }
.send { background: var(--accent); color: #fff; border-color: var(--accent); }
.mic { display: inline-flex; align-items: center; justify-content: center; width: 38px; height: 36px; }
.mic-icon { display: flex; flex-direction: column; align-items: center; }
.mic-icon .capsule { width: 8px; height: 12px; border: 2px solid currentColor; border-radius: 5px; }
.mic-icon .stand { width: 14px; height: 7px; margin-top: -3px; border: 2px solid currentColor; border-top: 0;
  border-radius: 0 0 8px 8px; }
.mic[aria-pressed="true"] { background: var(--danger); color: #fff; border-color: var(--danger); }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0);
  white-space: nowrap; }
@media (max-width: 390px) {
  .panel { left: 0; right: 0; bottom: 0; width: 100vw; max-width: 100vw; height: 88vh; max-height: 88vh;
    border-radius: 14px 14px 0 0; border-left: 0; border-right: 0; border-bottom: 0; }
  .launcher { right: 12px; bottom: 12px; }
}
`;

// What the panel says for each error code (the gateway's own message follows the title).
const ERROR_TITLES = {
  llm_unreachable: 'The language model cannot be reached.',
  llm_timeout: 'The language model took too long to answer.',
  llm_connect_timeout: 'The language model cannot be reached.',
  llm_first_token_timeout: 'The language model took too long to answer.',
  llm_idle_timeout: 'The language model stopped answering.',
  llm_interrupted: 'The language model stopped answering.',
  llm_rate_limited: 'The language model is busy.',
  llm_status: 'The language model refused the request.',
  llm_protocol: 'The language model answered something unreadable.',
  llm_config: 'The language model is not configured correctly.',
  llm_not_configured: 'No language model is configured.',
  rate_limited: 'Too many requests.',
  too_many_turns: 'Too many requests at once.',
  token_budget: 'Usage limit reached.',
  tool_timeout: 'A tool on this page did not answer in time.',
  round_limit: 'The assistant stopped.',
  csrf_failed: 'Your session changed: reload the page.',
  not_signed_in: 'You are not signed in: reload the page.',
  lost: 'The connection to the gateway was lost.',
  voice: 'Voice input failed.',
};

/** A DOM element with attributes and children; text only ever through textContent. */
function element(tag, attributes, children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (name === 'text') {
      node.textContent = value;
    } else if (value !== undefined && value !== null && value !== false) {
      node.setAttribute(name, value === true ? '' : String(value));
    }
  }
  for (const child of children || []) {
    node.append(child);
  }
  return node;
}

/** Why a tool or context is greyed out in the panel's list, in words (the policy's own reasons
 * pass through as the gateway wrote them). */
function hiddenReasonLabel(reason) {
  switch (reason) {
    case 'pending': return 'waiting for the gateway';
    case 'disabled': return 'disabled on the page';
    case 'page_tools_off': return 'page tools are off';
    case 'session_unavailable': return 'no gateway session';
    case 'over_limit': return 'over the size limit';
    default: return String(reason);
  }
}

/** A short, first-sentence example prompt from a tool's title or description. */
function examplePrompt(tool) {
  const description = String(tool.description || '').replace(/\s+/g, ' ').trim();
  const sentence = description.split(/(?<=[.!?])\s/)[0].replace(/[.!?]+$/, '');
  let text = sentence || String(tool.title || '').trim();
  if (!text) {
    return null;
  }
  if (text.length > EXAMPLE_CHARS) {
    text = text.slice(0, EXAMPLE_CHARS - 1).trimEnd() + '…';
  }
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A microphone drawn with CSS (no markup, no font dependency). */
function micIcon() {
  return element('span', { class: 'mic-icon', 'aria-hidden': 'true' }, [
    element('span', { class: 'capsule' }),
    element('span', { class: 'stand' }),
  ]);
}
