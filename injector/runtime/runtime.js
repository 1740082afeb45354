/**
 * Toolgate discovery runtime — PLACEHOLDER.
 *
 * This file is a stand-in that a later issue replaces with the real discovery runtime (tool and
 * context discovery, the agent panel). It only proves that the gateway's injection path works end
 * to end: the script was served from the content-hashed URL, passed its SRI check and the page's
 * Content-Security-Policy, and ran. It exposes a frozen marker object and marks the document; it
 * makes no network requests and writes nothing else.
 */
(function toolgateRuntime() {
  'use strict';

  // The script may end up on a page twice (a page that copies its own <head> into an iframe
  // srcdoc, a cached fragment re-inserted by a framework); the second run must be a no-op.
  if (Object.prototype.hasOwnProperty.call(window, '__toolgate__')) {
    return;
  }

  Object.defineProperty(window, '__toolgate__', {
    value: Object.freeze({ version: 1, ready: true }),
    writable: false,
    configurable: false,
    enumerable: false,
  });

  document.documentElement.setAttribute('data-toolgate-runtime', 'ready');
})();
