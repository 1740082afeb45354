// Helpdesk demo app: when an agent submits the declarative form (agentInvoked), the page sends
// it with fetch and answers the agent through respondWith; people get the normal form post.
"use strict";

const form = document.getElementById("ticket");
form.addEventListener("submit", (event) => {
  if (!event.agentInvoked || typeof event.respondWith !== "function") return;
  event.preventDefault();
  const sent = fetch("/tickets?format=json", { method: "POST", body: new URLSearchParams(new FormData(form)) })
    .then(async (response) => {
      if (!response.ok) throw new Error(await response.text());
      const ticket = await response.json();
      document.getElementById("opened").textContent = `Ticket #${ticket.id} opened: ${ticket.summary}`;
      return { ticket: ticket.id, summary: ticket.summary, category: ticket.category, urgency: ticket.urgency };
    });
  event.respondWith(sent);
});

document.body.dataset.appReady = "helpdesk";
