// Travel desk demo app: a search UI for people, and the same functions offered to agents as
// WebMCP tools registered from script. The gateway decides which of them an agent may see.
"use strict";

async function searchFlights({ from, to }) {
  const query = new URLSearchParams({ from: from || "", to: to || "" });
  const response = await fetch(`/api/flights?${query}`);
  if (!response.ok) throw new Error(`the travel desk answered ${response.status}`);
  const flights = await response.json();
  render(flights);
  return flights;
}

async function bookFlight({ flight, date, passengers }) {
  const response = await fetch("/api/bookings", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ flight, date, passengers: passengers || 1 }),
  });
  if (!response.ok) throw new Error(await response.text());
  const booking = await response.json();
  document.getElementById("booked").textContent = `Booked ${booking.booking.flight}: reference ${booking.reference}`;
  return booking;
}

function render(flights) {
  const list = document.getElementById("flights");
  list.replaceChildren(...flights.map((flight) => {
    const item = document.createElement("li");
    item.textContent = `${flight.flight} ${flight.from} → ${flight.to}, departs ${flight.departs}, €${flight.price_eur}`;
    return item;
  }));
}

document.getElementById("search").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  searchFlights({ from: form.get("from"), to: form.get("to") }).catch((error) => {
    document.getElementById("booked").textContent = String(error.message || error);
  });
});

// Current WebMCP draft: document.modelContext.registerTool returns a promise.
const context = document.modelContext;
if (context && typeof context.registerTool === "function") {
  context.registerTool({
    name: "search_flights",
    title: "Search flights",
    description: "Find flights of the company travel desk between two cities",
    inputSchema: {
      type: "object",
      properties: {
        from: { type: "string", description: "City of departure, e.g. Berlin" },
        to: { type: "string", description: "Destination city, e.g. London" },
      },
      required: ["from", "to"],
    },
    annotations: { readOnlyHint: true },
    execute: async (input) => ({ content: [{ type: "text", text: JSON.stringify(await searchFlights(input)) }] }),
  });
  context.registerTool({
    name: "book_flight",
    title: "Book a flight",
    description: "Book seats on a flight found with search_flights",
    inputSchema: {
      type: "object",
      properties: {
        flight: { type: "string", description: "Flight number, e.g. TG101" },
        date: { type: "string", format: "date", description: "Day of travel" },
        passengers: { type: "integer", minimum: 1, maximum: 9, description: "Number of seats" },
      },
      required: ["flight", "date"],
    },
    annotations: { consequentialHint: true },
    execute: (input) => bookFlight(input),
  });
}

// Early-preview WebMCP: navigator.modelContext.provideContext replaces the page's tool set.
if (navigator.modelContext && typeof navigator.modelContext.provideContext === "function") {
  navigator.modelContext.provideContext({
    tools: [{
      name: "list_destinations",
      description: "List the cities the travel desk flies to",
      inputSchema: { type: "object", properties: {} },
      execute: async () => ({ destinations: ["Berlin", "London", "Madrid", "New York", "Paris"] }),
    }],
  });
}

document.body.dataset.appReady = "travel";
