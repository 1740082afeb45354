// Ticket queue demo app: a plain table component that describes itself to agents through the
// component registry: a state view (what is shown, how it is sorted and filtered) and tools.
"use strict";

const table = document.querySelector('[data-cid="ticket_queue"]');
const view = { tickets: [], sort: "id", filter: null, selected: null };

function render() {
  const rows = view.tickets
    .filter((ticket) => !view.filter || ticket.category === view.filter)
    .sort((a, b) => (a[view.sort] < b[view.sort] ? -1 : a[view.sort] > b[view.sort] ? 1 : 0));
  table.tBodies[0].replaceChildren(...rows.map((ticket) => {
    const row = document.createElement("tr");
    for (const value of [ticket.id, ticket.summary, ticket.category, ticket.urgency]) {
      const cell = document.createElement("td");
      cell.textContent = String(value);
      row.append(cell);
    }
    if (ticket.id === view.selected) row.className = "selected";
    return row;
  }));
  return rows;
}

(window.__ci4a__ = window.__ci4a__ || []).push({
  id: "ticket_queue",
  root: table,
  description: "The helpdesk's open tickets",
  metadata: { kind: "table", columns: ["id", "summary", "category", "urgency"] },
  state: () => ({ sort: view.sort, filter: view.filter, selected: view.selected, shown: render().map((t) => t.id) }),
  tools: {
    sort: {
      description: "Sort the queue by a column",
      input_schema: { type: "object", properties: { column: { enum: ["id", "summary", "category", "urgency"] } }, required: ["column"] },
      annotations: { read_only: true },
      execute: ({ column }) => { view.sort = column; return { shown: render().map((t) => t.id) }; },
    },
    filter: {
      description: "Show only tickets of one category (null shows all)",
      input_schema: { type: "object", properties: { category: { enum: ["hardware", "software", "access", null] } }, required: ["category"] },
      annotations: { read_only: true },
      execute: ({ category }) => { view.filter = category; return { shown: render().map((t) => t.id) }; },
    },
    select: {
      description: "Highlight one ticket by its number",
      input_schema: { type: "object", properties: { id: { type: "integer", minimum: 1 } }, required: ["id"] },
      execute: ({ id }) => {
        if (!view.tickets.some((ticket) => ticket.id === id)) throw new Error(`no ticket #${id}`);
        view.selected = id;
        render();
        return { selected: id };
      },
    },
  },
});

fetch("/api/tickets").then((response) => response.json()).then((tickets) => {
  view.tickets = tickets;
  render();
  document.body.dataset.appReady = "queue";
});
