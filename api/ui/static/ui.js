// Elephantasm inspector: progressive enhancement only; every page works without it.
(function () {
  "use strict";
  // Ask before a form that changes data (identity restore) is sent.
  document.addEventListener("submit", function (event) {
    var message = event.target.getAttribute("data-confirm");
    if (message && !window.confirm(message)) event.preventDefault();
  });
  // "Copy" buttons copy the text of the element they name (the rendered prompt).
  document.addEventListener("click", function (event) {
    var id = event.target.getAttribute && event.target.getAttribute("data-copy");
    if (!id) return;
    var source = document.getElementById(id);
    if (!source || !navigator.clipboard) return;
    navigator.clipboard.writeText(source.textContent).then(function () {
      event.target.textContent = "Copied";
      window.setTimeout(function () { event.target.textContent = "Copy"; }, 1500);
    });
  });
})();
