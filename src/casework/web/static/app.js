// casework labeller page: keyboard shortcuts, answer-fact lines, time on screen.
// Loaded from /static (the Content-Security-Policy allows no inline script).
(function () {
  "use strict";
  var shownAt = Date.now(), visibleMs = 0, visibleSince = document.hidden ? null : Date.now();

  function resetTimer() {
    shownAt = Date.now();
    visibleMs = 0;
    visibleSince = document.hidden ? null : Date.now();
  }
  document.addEventListener("visibilitychange", function () {
    if (document.hidden && visibleSince !== null) { visibleMs += Date.now() - visibleSince; visibleSince = null; }
    else if (!document.hidden && visibleSince === null) { visibleSince = Date.now(); }
  });
  function fillVisible(form) {
    var field = form.querySelector("input[name=visible_seconds]");
    if (!field) return;
    var ms = visibleMs + (visibleSince === null ? 0 : Date.now() - visibleSince);
    field.value = (ms / 1000).toFixed(1);
  }
  document.addEventListener("submit", function (e) { if (e.target.id === "label-form") fillVisible(e.target); }, true);
  document.addEventListener("htmx:configRequest", function (e) {
    var form = e.detail.elt;
    if (form && form.id === "label-form") {
      fillVisible(form);
      e.detail.parameters["visible_seconds"] = form.querySelector("input[name=visible_seconds]").value;
    }
  });
  // Keyboard focus on the outcome (so 1-4, Tab and Space work at once), the page at its top.
  function focusOutcome() {
    var first = document.querySelector("#label-form input[name=outcome]:checked") || document.querySelector("#label-form input[name=outcome]");
    if (first) first.focus({ preventScroll: true });
  }
  document.addEventListener("htmx:afterSwap", function () {
    resetTimer();
    window.scrollTo(0, 0);
    focusOutcome();
  });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", focusOutcome);
  else focusOutcome();

  function typing(el) {
    return el && (el.tagName === "TEXTAREA" || (el.tagName === "INPUT" && el.type === "text"));
  }
  // Adjudication: A / B / M / W choose the decision (W opens the written label), Ctrl+Enter stores.
  function adjudicationKey(e, form) {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      form.requestSubmit();
      return;
    }
    if (typing(document.activeElement) || e.ctrlKey || e.metaKey || e.altKey) return;
    var radio = form.querySelector('input[name=choice][data-key="' + e.key.toLowerCase() + '"]');
    if (!radio) return;
    e.preventDefault();
    radio.checked = true;
    radio.focus();
    if (radio.value === "write") form.querySelector("details.write").open = true;
  }
  document.addEventListener("keydown", function (e) {
    var decision = document.getElementById("adjudicate-form");
    if (decision) { adjudicationKey(e, decision); return; }
    var form = document.getElementById("label-form");
    if (!form) return;
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      form.requestSubmit();
      return;
    }
    if (typing(document.activeElement) || e.ctrlKey || e.metaKey || e.altKey) return;
    var radio = form.querySelector('input[name=outcome][data-key="' + e.key + '"]');
    if (radio) { e.preventDefault(); radio.checked = true; radio.focus(); }
  });

  function factLine() {
    var li = document.createElement("li");
    var input = document.createElement("input");
    input.type = "text"; input.name = "fact"; input.setAttribute("aria-label", "answer fact");
    var remove = document.createElement("button");
    remove.type = "button"; remove.className = "remove-fact"; remove.setAttribute("aria-label", "remove this fact");
    remove.textContent = "\u2212";
    li.appendChild(input); li.appendChild(document.createTextNode(" ")); li.appendChild(remove);
    return li;
  }
  document.addEventListener("click", function (e) {
    var t = e.target;
    if (!(t instanceof Element)) return;
    if (t.classList.contains("add-fact")) {
      var list = t.parentElement.querySelector(".fact-list");
      var li = factLine();
      list.appendChild(li);
      li.querySelector("input").focus();
    } else if (t.classList.contains("remove-fact")) {
      var item = t.closest("li");
      var next = item.nextElementSibling || item.previousElementSibling;
      item.remove();
      if (next) next.querySelector("input").focus();
    }
  });
})();
