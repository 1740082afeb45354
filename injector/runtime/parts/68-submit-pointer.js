// 68-submit-pointer.js — pointing the user at the button that sends a filled form.
//
// A form tool without `toolautosubmit` is filled by the agent and sent by the user (the human
// gate). The panel says so, and this part points at the button: it scrolls it into view and
// outlines it until the call ends, then puts the page's own outline back. Nothing else of the
// page changes.

const { querySelector: elementQuery } = Element.prototype;

/**
 * The button the user must press to send the form of tool `name`: null when the tool is not a
 * form, submits itself (`toolautosubmit`), or has no submit button.
 */
function submitAwaited(name) {
  const entry = core.tools.find((candidate) => candidate.name === name);
  const form = entry && entry.raw ? entry.raw.key : null;
  if (!(form instanceof FormElement)) {
    return null;
  }
  const tool = formDerivation.readForm(form);
  if (!tool || tool.autosubmit) {
    return null;
  }
  return elementQuery.call(form, 'button:not([type]), button[type="submit"], input[type="submit"]');
}

/** The words on a submit button, for the panel to name it. */
function buttonLabel(button) {
  const text = String(button.textContent || button.value || '').replace(/\s+/g, ' ').trim();
  return text.slice(0, 40) || 'Submit';
}

/** What puts each pointed-at button's outline back, by call id. */
const pointers = new Map();

/** Outlines `button` for call `callId` and scrolls it into view. */
function pointAt(callId, button) {
  const previous = button.style.outline;
  button.style.outline = '3px solid #f79009';
  button.scrollIntoView({ block: 'center', behavior: 'smooth' });
  pointers.set(callId, () => {
    button.style.outline = previous;
  });
}

/** Puts back the outline of call `callId`'s button (every call's without an id). */
function stopPointing(callId) {
  for (const id of callId === undefined ? [...pointers.keys()] : [callId]) {
    const restore = pointers.get(id);
    pointers.delete(id);
    if (restore) {
      restore();
    }
  }
}
