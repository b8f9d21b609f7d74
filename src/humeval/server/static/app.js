// humeval participant pages: timing, slider read-outs, the magnitude-estimation warning.
(function () {
  "use strict";
  var form = document.getElementById("task-form");
  if (!form) { return; }
  var started = Date.now();
  var warned = false;
  form.querySelectorAll(".slider-input").forEach(function (input) {
    var out = input.parentNode.querySelector(".slider-value");
    input.addEventListener("input", function () { out.textContent = input.value; });
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
