// Task board demo app: plain DOM code plus VOIX tool handlers. The page, not the gateway,
// implements what each tool does; the gateway only lets an agent see and call it.
"use strict";

async function api(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`the board answered ${response.status}`);
  return response.json();
}

function render(tasks) {
  const list = document.getElementById("tasks");
  list.replaceChildren(...tasks.map((task) => {
    const item = document.createElement("li");
    item.textContent = `#${task.id} ${task.title}`;
    if (task.done) item.className = "done";
    return item;
  }));
  const context = document.querySelector('context[name="task_list"]');
  if (context) context.textContent = tasks.map((t) => `#${t.id} ${t.title}${t.done ? " (done)" : ""}`).join("\n");
}

function answer(tool, promise) {
  promise.then(
    (tasks) => { render(tasks); tool.dispatchEvent(new CustomEvent("return", { detail: { success: true, tasks } })); },
    (error) => tool.dispatchEvent(new CustomEvent("return", { detail: { success: false, error: String(error.message || error) } })),
  );
}

// The gateway removes the tools this user's agent may not use, so any of them may be missing.
const handlers = {
  add_task: (detail) => api("/api/tasks", { title: String(detail.title || "") }),
  complete_task: (detail) => api("/api/tasks/done", { id: Number(detail.id) }),
  delete_task: (detail) => api("/api/tasks/delete", { id: Number(detail.id) }),
};
for (const [name, handle] of Object.entries(handlers)) {
  const tool = document.querySelector(`tool[name="${name}"]`);
  if (tool) tool.addEventListener("call", (event) => answer(event.target, handle(event.detail || {})));
}

document.getElementById("add-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = event.target.elements.title;
  api("/api/tasks", { title: input.value }).then(render);
  input.value = "";
});

document.body.dataset.appReady = "tasks";
