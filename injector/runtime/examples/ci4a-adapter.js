// ci4a-adapter.js — a reference CI4A adapter for plain HTML: sortable tables and selects.
//
// Include it anywhere on a page (before or after the Toolgate runtime). It registers, through
// `window.__ci4a__`, every
//   <table data-cid="ID" data-ci4a="sortable-table">  → tool ID.sort {column, direction}
//   <select data-cid="ID">                              → tool ID.setValue {value}
// and offers each one's state view (context ID.state). It only uses the documented registry
// API (injector/runtime/README.md), so it doubles as an example of writing an adapter.
(function ci4aAdapter() {
  'use strict';

  function headers(table) {
    return Array.from(table.tHead ? table.tHead.rows[0].cells : [], (cell) => cell.textContent.trim());
  }

  function rows(table) {
    return Array.from(table.tBodies[0] ? table.tBodies[0].rows : []);
  }

  function sortableTable(table) {
    const columns = headers(table);
    let sorted = null;
    return {
      id: table.dataset.cid,
      root: table,
      description: table.getAttribute('aria-label') || table.caption?.textContent.trim() || 'A table',
      metadata: { kind: 'sortable-table', columns },
      state: () => ({
        sorted_by: sorted,
        rows: rows(table).slice(0, 50).map((row) => Object.fromEntries(
          columns.map((column, index) => [column, row.cells[index] ? row.cells[index].textContent.trim() : '']),
        )),
      }),
      tools: {
        sort: {
          description: `Sort the rows by one column (${columns.join(', ')})`,
          input_schema: {
            type: 'object',
            properties: {
              column: { type: 'string', enum: columns },
              direction: { type: 'string', enum: ['ascending', 'descending'] },
            },
            required: ['column'],
            additionalProperties: false,
          },
          annotations: { read_only: false },
          execute({ column, direction = 'ascending' }) {
            const index = columns.indexOf(column);
            const sign = direction === 'descending' ? -1 : 1;
            const body = table.tBodies[0];
            const compare = (left, right) => {
              const [a, b] = [left.cells[index].textContent.trim(), right.cells[index].textContent.trim()];
              const [x, y] = [Number(a), Number(b)];
              return sign * (Number.isFinite(x) && Number.isFinite(y) ? x - y : a.localeCompare(b));
            };
            rows(table).sort(compare).forEach((row) => body.appendChild(row));
            sorted = { column, direction };
            return { sorted_by: sorted, first: rows(table)[0]?.cells[index]?.textContent.trim() ?? null };
          },
        },
      },
    };
  }

  function select(element) {
    const options = () => Array.from(element.options, (option) => ({ value: option.value, label: option.text.trim() }));
    return {
      id: element.dataset.cid,
      root: element,
      description: element.getAttribute('aria-label') || element.labels?.[0]?.textContent.trim() || 'A choice',
      metadata: { kind: 'select' },
      state: () => ({ value: element.value, options: options() }),
      tools: {
        setValue: {
          description: 'Choose one of the options',
          input_schema: {
            type: 'object',
            properties: { value: { type: 'string', enum: options().map((option) => option.value) } },
            required: ['value'],
            additionalProperties: false,
          },
          execute({ value }) {
            element.value = value;
            element.dispatchEvent(new Event('input', { bubbles: true }));
            element.dispatchEvent(new Event('change', { bubbles: true }));
            return { value: element.value };
          },
        },
      },
    };
  }

  function registerAll() {
    const found = [
      ...Array.from(document.querySelectorAll('table[data-cid][data-ci4a="sortable-table"]'), sortableTable),
      ...Array.from(document.querySelectorAll('select[data-cid]'), select),
    ];
    // The queue idiom works whether or not the runtime has started yet.
    window.__ci4a__ = window.__ci4a__ || [];
    window.__ci4a__.push(...found);
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', registerAll, { once: true });
  } else {
    registerAll();
  }
})();
