// casework labeller page: keyboard shortcuts, answer-fact lines, time on screen, the next case
// fetched ahead.
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
  // The next case is fetched while this one is on screen, without a served-at token: the submit
  // names it, and when it is indeed next the answer brings only the token (#case-slot), made as
  // the case is shown. Anything else (no prefetch yet, another next case) renders as before.
  var prefetched = null;
  function prefetchNext() {
    prefetched = null;
    var current = document.querySelector("#work .columns[data-next]");
    if (!current || !window.fetch) return;
    fetch(current.getAttribute("data-next"), { credentials: "same-origin", headers: { "HX-Request": "true" } })
      .then(function (r) { return r.status === 200 ? r.text() : null; })
      .then(function (html) {
        if (html === null || !current.isConnected) return;
        var holder = document.createElement("div");
        holder.innerHTML = html;
        var node = holder.querySelector(".columns[data-item]");
        if (node) prefetched = { item: node.getAttribute("data-item"), node: node };
      })
      .catch(function () { prefetched = null; });
  }
  function showPrefetched() {
    var slot = document.getElementById("case-slot");
    if (!slot) return true;
    var held = prefetched;
    prefetched = null;
    if (!held || held.item !== slot.getAttribute("data-item")) {
      htmx.ajax("GET", "/label", { target: "#work", swap: "innerHTML" });
      return false;
    }
    held.node.querySelector("input[name=served]").value = slot.getAttribute("data-served");
    slot.replaceWith(held.node);
    htmx.process(held.node);
    return true;
  }
  document.addEventListener("htmx:configRequest", function (e) {
    var form = e.detail.elt;
    if (form && form.id === "label-form") {
      fillVisible(form);
      e.detail.parameters["visible_seconds"] = form.querySelector("input[name=visible_seconds]").value;
      if (prefetched) e.detail.parameters["prefetched"] = prefetched.item;
    }
  });
  // Keyboard focus on the outcome (so 1-4, Tab and Space work at once), the page at its top.
  function focusOutcome() {
    var first = document.querySelector("#label-form input[name=outcome]:checked") || document.querySelector("#label-form input[name=outcome]");
    if (first) first.focus({ preventScroll: true });
  }
  document.addEventListener("htmx:afterSwap", function () {
    if (!showPrefetched()) return;
    resetTimer();
    window.scrollTo(0, 0);
    focusOutcome();
    prefetchNext();
  });
  function pageReady() { focusOutcome(); prefetchNext(); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", pageReady);
  else pageReady();

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
  // Trajectory review: Up/Down (or J/K) and a step's number move between steps, F marks the step
  // in focus as the first failing one, N marks none; I/O/P severity, A/U/E/C fault; T goes to the
  // category (Escape back to the steps); Enter submits (Ctrl+Enter from the reason).
  var stepDigits = "", stepDigitsAt = 0;
  function allSteps() { return Array.prototype.slice.call(document.querySelectorAll("ol.steps li.step")); }
  function currentStep() {
    var el = document.activeElement;
    return (el && el.closest && el.closest("li.step")) || document.querySelector("ol.steps li.step.current");
  }
  function focusStep(li) {
    if (!li) return;
    allSteps().forEach(function (s) { s.classList.remove("current"); });
    li.classList.add("current");
    li.focus({ preventScroll: true });
    li.scrollIntoView({ block: "nearest" });
  }
  function showMarked(value) {
    var shown = document.getElementById("marked-step");
    if (shown) shown.textContent = value;
  }
  function markStep(value) {
    var radio = document.querySelector('input[name=step][value="' + value + '"]');
    if (!radio) return;
    radio.checked = true;
    showMarked(value);
  }
  function trajectoryKey(e, form) {
    var el = document.activeElement;
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); form.requestSubmit(); return; }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (el && el.tagName === "SELECT") {
      // In the category list, letters and arrows choose a category, as the browser does.
      if (e.key === "Escape") { e.preventDefault(); focusStep(currentStep() || allSteps()[0]); }
      else if (e.key === "Enter") { e.preventDefault(); form.requestSubmit(); }
      return;
    }
    if (typing(el)) return;
    if (e.key === "Enter") {
      if (el && (el.tagName === "BUTTON" || el.tagName === "A")) return; // they act on Enter themselves
      e.preventDefault();
      form.requestSubmit();
      return;
    }
    var steps = allSteps(), at = steps.indexOf(currentStep());
    if (e.key === "ArrowDown" || e.key === "j") { e.preventDefault(); focusStep(steps[Math.min(steps.length - 1, at + 1)]); return; }
    if (e.key === "ArrowUp" || e.key === "k") { e.preventDefault(); focusStep(steps[Math.max(0, at - 1)]); return; }
    if (/^[0-9]$/.test(e.key)) {
      // Digits typed within 0.8 s make one number (step 12), as long as that step exists.
      e.preventDefault();
      var now = Date.now();
      stepDigits = (now - stepDigitsAt < 800 ? stepDigits : "") + e.key;
      stepDigitsAt = now;
      var target = document.getElementById("step-" + Number(stepDigits));
      if (!target) { stepDigits = e.key; target = document.getElementById("step-" + Number(e.key)); }
      focusStep(target);
      return;
    }
    var key = e.key.toLowerCase();
    if (key === "f") {
      var li = currentStep();
      if (li) { e.preventDefault(); markStep(li.getAttribute("data-step")); }
      return;
    }
    if (key === "t") { e.preventDefault(); form.querySelector("select[name=category]").focus(); return; }
    var radio = form.querySelector('input[type=radio][data-key="' + key + '"]');
    if (!radio) return;
    e.preventDefault();
    radio.checked = true;
    if (radio.name === "step") showMarked(radio.value);
  }
  document.addEventListener("change", function (e) {
    var t = e.target;
    if (t instanceof HTMLInputElement && t.name === "step" && document.getElementById("trajectory-form")) showMarked(t.value);
  });
  // The trajectory page opens on its marked (or first) step; the review list on its first item.
  function focusTrajectory() {
    if (!document.getElementById("trajectory-form")) {
      var item = document.querySelector("a.open-item");
      if (item) item.focus({ preventScroll: true });
      return;
    }
    var marked = document.querySelector("ol.steps input[name=step]:checked");
    focusStep((marked && marked.closest("li.step")) || allSteps()[0]);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", focusTrajectory);
  else focusTrajectory();

  document.addEventListener("keydown", function (e) {
    var trajectory = document.getElementById("trajectory-form");
    if (trajectory) { trajectoryKey(e, trajectory); return; }
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
