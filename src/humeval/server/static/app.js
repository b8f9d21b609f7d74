// humeval participant pages: timing, slider read-outs, the magnitude-estimation warning, the return after completion.
(function () {
  "use strict";
  // the completion page returns to the platform after a few seconds unless the participant stays
  // (a script, not <meta http-equiv="refresh">: a timed redirect must be possible to stop, WCAG 2.2.1)
  var redirect = document.getElementById("redirect");
  var link = document.getElementById("completion-link");
  if (redirect && link) {
    var timer = setTimeout(function () { window.location.assign(link.href); }, 1000 * Number(redirect.dataset.seconds));
    document.getElementById("stay").addEventListener("click", function () { clearTimeout(timer); redirect.hidden = true; });
  }
  var form = document.getElementById("task-form");
  if (!form) { return; }
  var started = Date.now();
  var warned = false;
  // a slider has no value until it is moved (or a number is typed): the number box is the field submitted
  form.querySelectorAll(".slider-input").forEach(function (range) {
    var box = range.closest("fieldset").querySelector(".slider-value");
    range.tabIndex = 0;
    range.addEventListener("input", function () {
      range.classList.remove("untouched");
      box.value = range.value;
    });
    box.addEventListener("input", function () {
      if (box.value !== "") { range.classList.remove("untouched"); range.value = box.value; }
    });
  });
  // magnitude scores are positive numbers, as the server requires (min="0" allows 0 itself)
  form.querySelectorAll("input[data-positive]").forEach(function (input) {
    input.addEventListener("input", function () {
      input.setCustomValidity(input.value !== "" && Number(input.value) <= 0 ? form.dataset.positiveMessage : "");
    });
  });
  form.addEventListener("submit", function (event) {
    var scores = form.querySelectorAll(".me-score");
    if (scores.length && !warned) {
      var same = Array.prototype.every.call(scores, function (s) {
        return s.value !== "" && Number(s.value) === Number(s.dataset.modulus);
      });
      if (same) {
        warned = true;
        document.getElementById("me-warning").hidden = false;
        event.preventDefault();
        return;
      }
    }
    document.getElementById("seconds").value = ((Date.now() - started) / 1000).toFixed(2);
    var button = document.getElementById("submit");
    setTimeout(function () { button.disabled = true; }, 0);
  });
})();
