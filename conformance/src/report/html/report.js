// The conformance report's behaviour: filter the cases by status and id,
// expand a case to its detail, audit events and wire lines.
"use strict";

// Every error the page meets (read by the browser test).
window.kagedErrors = [];
addEventListener("error", (e) => window.kagedErrors.push(String(e.message)));

const filter = document.getElementById("filter");
const search = document.getElementById("search");
const rows = [...document.querySelectorAll("tr.case")];

function detailOf(row) {
  return document.getElementById(`detail-${row.dataset.index}`);
}

function setOpen(row, open) {
  row.setAttribute("aria-expanded", open ? "true" : "false");
  detailOf(row).hidden = !open || row.hidden;
}

function apply() {
  const status = filter.value;
  const text = search.value.trim().toLowerCase();
  let shown = 0;
  for (const row of rows) {
    const visible = (status === "all" || row.dataset.status === status
        || (status === "open" && row.dataset.status !== "pass"))
      && (text === "" || row.dataset.id.toLowerCase().includes(text));
    row.hidden = !visible;
    if (visible) shown += 1;
    detailOf(row).hidden = !visible || row.getAttribute("aria-expanded") !== "true";
  }
  document.getElementById("shown").textContent = `${shown} of ${rows.length} cases shown`;
}

for (const row of rows) {
  const toggle = () => setOpen(row, row.getAttribute("aria-expanded") !== "true");
  row.addEventListener("click", toggle);
  row.addEventListener("keydown", (e) => {
    if (e.key === "Enter" || e.key === " ") { e.preventDefault(); toggle(); }
  });
}
filter.addEventListener("change", apply);
search.addEventListener("input", apply);
document.getElementById("expand-failures").addEventListener("click", () => {
  for (const row of rows) if (row.dataset.status === "fail") setOpen(row, true);
});
apply();
