// The consent requests of a pending project (GET /api/v1/pending): one
// item per package with its source, version requirement, the manifest to
// consent to once read (capabilities and where they land), and approve /
// refuse buttons. Loaded after settings.js (it uses its `el` and `api`).
"use strict";

function pendingItem(r) {
  const caps = r.plan
    ? el("ul", { class: "capabilities" }, ...(r.plan.capabilities.length ? r.plan.capabilities : ["(none)"])
      .map((c) => el("li", { text: r.plan.resolved[c] ? `${c}  → ${r.plan.resolved[c]}` : c })))
    : null;
  const decide = (what) => el("button", {
    type: "button", class: `action ${what}`, text: what === "approve" && r.state === "awaiting_fetch" ? "fetch" : what,
    onclick: async () => {
      const res = await api("POST", `/api/v1/pending/${encodeURIComponent(r.plugin)}/${what}`);
      if (!res.ok) alertIn(document.getElementById("pending"), errorText(res));
      loadPending();
    },
  });
  const approvable = r.state !== "no_source";
  return el("li", { class: "pending", "data-plugin": r.plugin, "data-state": r.state },
    el("header", {}, el("strong", { text: r.package }), " ",
      el("span", { class: "badge", "data-state": r.state, text: r.state.replace("_", " ") })),
    el("p", { text: `source: ${r.source || "not specified: install it by hand"}` +
      (r.version ? `; the project requires ${r.version}` : "") }),
    r.plan ? el("p", { text: `${r.plan.name} ${r.plan.version}: ${r.plan.description}` }) : null,
    caps,
    ...(r.plan ? r.plan.warnings.map((w) => el("p", { class: "warning", text: `warning: ${w}` })) : []),
    r.problem ? el("p", { class: "problem", role: "alert", text: r.problem }) : null,
    el("div", { class: "actions" }, approvable ? decide("approve") : null, decide("refuse")));
}

async function loadPending() {
  const res = await api("GET", "/api/v1/pending");
  const panel = document.getElementById("pending");
  if (!res.ok) return;
  const list = res.json.pending;
  panel.hidden = list.length === 0;
  document.getElementById("pending-list").replaceChildren(...list.map(pendingItem));
  if (res.json.project === "pending" && list.length === 0) setTimeout(loadPending, 500);
}

if (TOKEN !== null) loadPending();
