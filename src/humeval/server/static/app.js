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
  // the waitlist: ask for a place every few seconds; go on to the study when one opens, or say that none opened
  // when the wait ends (its end kept for this tab, so that a reload does not wait again from the start)
  var waitlist = document.getElementById("waitlist");
  if (waitlist) {
    var key = "humeval-waitlist-until:" + waitlist.dataset.retry;
    var until = Number(sessionStorage.getItem(key)) || Date.now() + 1000 * Number(waitlist.dataset.seconds);
    sessionStorage.setItem(key, String(until));
    var ended = function () {
      sessionStorage.removeItem(key);
      waitlist.hidden = true;
      document.getElementById("waitlist-ended").hidden = false;
    };
    var ask = function () {
      if (Date.now() >= until) { ended(); return; }
      fetch("/api/v1/places", { cache: "no-store" }).then(function (r) { return r.json(); }).then(function (places) {
        if (places.open > 0) { window.location.assign(waitlist.dataset.retry); }
        else if (places.finished) { ended(); }
        else { setTimeout(ask, 1000 * Number(waitlist.dataset.poll)); }
      }).catch(function () { setTimeout(ask, 1000 * Number(waitlist.dataset.poll)); });
    };
    setTimeout(ask, 1000 * Number(waitlist.dataset.poll));
  }
  var form = document.getElementById("task-form");
  if (!form) { return; }
  var started = Date.now();
  var warned = false;
  // a slider has no value until it is moved (or a number is typed): the number box is the field submitted;
  // its track is filled up to the thumb (--fill) once set, and neutral until then
  form.querySelectorAll(".slider-input").forEach(function (range) {
    var box = range.closest("fieldset").querySelector(".slider-value");
    function fill() {
      var min = Number(range.min), max = Number(range.max);
      range.style.setProperty("--fill", (100 * (Number(range.value) - min) / (max - min)) + "%");
    }
    range.tabIndex = 0;
    fill();
    range.addEventListener("input", function () {
      range.classList.remove("untouched");
      box.value = range.value;
      fill();
    });
    box.addEventListener("input", function () {
      if (box.value !== "") { range.classList.remove("untouched"); range.value = box.value; fill(); }
    });
  });
  // a live battle: the two answers stream in as they are written; once both are stored the page shows them (and
  // takes the vote); when one fails, what was shown is withdrawn and the participant gets another battle
  if (form.dataset.stream) {
    var status = document.getElementById("battle-status");
    var outs = document.querySelectorAll(".output[data-position]");
    var source = new EventSource(form.dataset.stream);
    source.addEventListener("piece", function (event) {
      var piece = JSON.parse(event.data);
      if (outs[piece.side]) { outs[piece.side].textContent += piece.text; }
    });
    source.addEventListener("done", function () { source.close(); window.location.reload(); });
    source.addEventListener("failed", function (event) {
      source.close();
      outs.forEach(function (out) { out.textContent = ""; });
      status.textContent = status.dataset.failed;
      window.location.assign(JSON.parse(event.data).next);
    });
    source.onerror = function () { source.close(); status.textContent = status.dataset.error; };
  }
  // an arena battle's votes from the keyboard: 1 / A, 2 / B, 3 / T (tie), 4 / X (both bad) check the vote and
  // focus it (Enter then submits); typing in a text field is left alone
  var votes = form.querySelector(".votes[data-battle]");
  if (votes) {
    var keys = { "1": 0, "a": 0, "2": 1, "b": 1, "3": 2, "t": 2, "4": 3, "x": 3 };
    document.addEventListener("keydown", function (event) {
      var target = event.target;
      if (event.altKey || event.ctrlKey || event.metaKey || (target && (target.tagName === "TEXTAREA" ||
          (target.tagName === "INPUT" && target.type !== "radio")))) { return; }
      var index = keys[event.key.toLowerCase()];
      var radios = votes.querySelectorAll("input[type=radio]");
      if (index === undefined || !radios[index]) { return; }
      radios[index].checked = true;
      radios[index].focus();
      event.preventDefault();
    });
  }
  // a scale whose labels do not fit its columns (a word wider than its column) is stacked, one point a row,
  // rather than breaking a word in the middle
  var scales = form.querySelectorAll(".scale");
  function stack() {
    scales.forEach(function (scale) {
      scale.classList.remove("stacked");
      var tight = Array.prototype.some.call(scale.querySelectorAll(".point"), function (point) {
        return point.scrollWidth > point.clientWidth + 1;
      });
      scale.classList.toggle("stacked", tight);
    });
  }
  stack();
  window.addEventListener("resize", stack);
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
// error span annotation (ESA): tap/click the first and the last word of an error (or arrow keys, Shift to
// extend), or select any characters with the mouse or the keyboard's text selection, then "minor" or
// "major". The output is rendered (Markdown, a chat); each word is a span whose data-s/data-e are its
// offsets (Unicode code points, as the server counts them) into the output's source text, and the spans
// are kept as such offsets in a hidden field. A word whose source is as long as the word shown can be
// marked character by character; any other (an escape inside it) is marked whole. Marked spans are
// painted exactly with the CSS Custom Highlight API where the browser has it, else on the words they touch.
// A box with a category list (.esa-category, MQM) gives each new span the category chosen; a severity other
// than minor (major, critical) is painted as major
(function () {
  "use strict";
  document.querySelectorAll(".esa").forEach(function (box) {
    var name = box.dataset.criterion;
    var text = document.querySelector('.esa-text[data-criterion="' + name + '"]');
    var field = box.querySelector(".esa-spans");
    var list = box.querySelector(".esa-list");
    if (!text || !list) { return; }
    var toks = Array.prototype.slice.call(text.querySelectorAll(".tok"));
    var spans = [];
    try { spans = JSON.parse(field.value || "[]"); } catch (e) { spans = []; }
    var anchor = -1, cursor = -1;
    var exact = typeof Highlight === "function" && window.CSS && CSS.highlights;
    function points(str) { return Array.from(str).length; }
    function units(str, n) { return Array.from(str).slice(0, n).join("").length; }
    function tokOf(node) {
      var el = node.nodeType === 3 ? node.parentNode : node;
      return el && el.classList && el.classList.contains("tok") ? el : null;
    }
    function exactTok(t) { return points(t.textContent) === Number(t.dataset.e) - Number(t.dataset.s); }
    // a DOM position (node, offset) inside the text -> code point offset into the source; a position
    // between words (markup, whitespace) snaps to the next word (side "start") or the previous one ("end")
    function offsetOf(node, off, side) {
      var tok = tokOf(node);
      if (tok && node.nodeType === 3) {
        var s = Number(tok.dataset.s), e = Number(tok.dataset.e), k = points(node.data.slice(0, off));
        if (exactTok(tok)) { return s + k; }
        return side === "start" ? (k < points(node.data) ? s : e) : (k > 0 ? e : s);
      }
      var point = document.createRange();
      point.setStart(node, off);
      if (side === "start") {
        for (var i = 0; i < toks.length; i++) { if (point.comparePoint(toks[i], 1) > 0) { return Number(toks[i].dataset.s); } }
        return toks.length ? Number(toks[toks.length - 1].dataset.e) : 0;
      }
      for (var j = toks.length - 1; j >= 0; j--) { if (point.comparePoint(toks[j], 0) < 0) { return Number(toks[j].dataset.e); } }
      return toks.length ? Number(toks[0].dataset.s) : 0;
    }
    function selected() {
      var sel = window.getSelection();
      if (!sel || sel.isCollapsed || !sel.rangeCount) { return null; }
      var r = sel.getRangeAt(0);
      if (!text.contains(r.startContainer) || !text.contains(r.endContainer)) { return null; }
      var start = offsetOf(r.startContainer, r.startOffset, "start"), end = offsetOf(r.endContainer, r.endOffset, "end");
      return end > start ? [start, end] : null;
    }
    // where a source offset falls in a word's text node (a word marked whole: its start or its end)
    function unitAt(t, cp) {
      var node = t.firstChild, s = Number(t.dataset.s);
      if (exactTok(t)) { return units(node.data, Math.max(0, Math.min(cp - s, points(node.data)))); }
      return cp <= s ? 0 : node.data.length;
    }
    // source offsets -> DOM range over the words' text nodes
    function domRange(start, end) {
      var range = document.createRange(), begun = false;
      toks.forEach(function (t) {
        var s = Number(t.dataset.s), e = Number(t.dataset.e), node = t.firstChild;
        if (!node || e <= start || s >= end) { return; }
        if (!begun) { range.setStart(node, unitAt(t, start)); begun = true; }
        range.setEnd(node, unitAt(t, Math.min(e, end)));
      });
      return begun ? range : null;
    }
    // the text of a span as shown: its words, with a space where the source has something between two
    function piece(sp) {
      var out = "", last = -1;
      toks.forEach(function (t) {
        var s = Number(t.dataset.s), e = Number(t.dataset.e);
        if (s >= sp.end || sp.start >= e) { return; }
        out += (last >= 0 && s > last ? " " : "") +
          (exactTok(t) ? Array.from(t.textContent).slice(Math.max(0, sp.start - s), sp.end - s).join("") : t.textContent);
        last = e;
      });
      return out;
    }
    function range() {
      if (anchor < 0) { return null; }
      return [Math.min(anchor, cursor), Math.max(anchor, cursor)];
    }
    function paint() {
      var r = range();
      toks.forEach(function (t, i) {
        var s = Number(t.dataset.s), e = Number(t.dataset.e);
        t.classList.toggle("sel", r !== null && i >= r[0] && i <= r[1]);
        t.classList.toggle("cursor", i === cursor);
        var hit = exact ? null : spans.filter(function (sp) { return sp.start < e && s < sp.end; })[0];
        t.classList.toggle("err-minor", !!hit && hit.severity === "minor");
        t.classList.toggle("err-major", !!hit && hit.severity !== "minor");
      });
      if (exact) {
        ["minor", "major"].forEach(function (severity) {
          var ranges = spans.filter(function (sp) { return (sp.severity === "minor" ? "minor" : "major") === severity; })
            .map(function (sp) { return domRange(sp.start, sp.end); }).filter(Boolean);
          var all = CSS.highlights.get("esa-" + severity) || new Highlight();
          (box._ranges && box._ranges[severity] || []).forEach(function (r) { all.delete(r); });
          ranges.forEach(function (r) { all.add(r); });
          box._ranges = box._ranges || {};
          box._ranges[severity] = ranges;
          CSS.highlights.set("esa-" + severity, all);
        });
      }
      field.value = JSON.stringify(spans);
      list.textContent = "";
      box.querySelector(".esa-none").hidden = spans.length > 0;
      spans.forEach(function (sp, k) {
        var li = document.createElement("li");
        li.textContent = "\u201c" + piece(sp) + "\u201d: " + box.dataset[sp.severity] +
          (sp.category ? " (" + sp.category + ")" : "") + " ";
        li.className = "esa-" + sp.severity;
        var remove = document.createElement("button");
        remove.type = "button";
        remove.className = "secondary";
        remove.textContent = box.dataset.remove;
        remove.addEventListener("click", function () { spans.splice(k, 1); paint(); });
        li.appendChild(remove);
        list.appendChild(li);
      });
    }
    toks.forEach(function (t, i) {
      t.addEventListener("click", function (event) {
        if (event.shiftKey && anchor >= 0) { cursor = i; }
        else if (anchor >= 0 && anchor === cursor && i !== anchor) { cursor = i; }  // second tap: extend
        else if (anchor === i && cursor === i) { anchor = cursor = -1; }            // same word again: unselect
        else { anchor = cursor = i; }
        paint();
      });
    });
    text.addEventListener("keydown", function (event) {
      var step = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: 1, ArrowUp: -1 }[event.key];
      if (!step || !toks.length) { return; }
      if (getComputedStyle(text).direction === "rtl" && (event.key === "ArrowRight" || event.key === "ArrowLeft")) { step = -step; }
      event.preventDefault();
      var next = cursor < 0 ? 0 : Math.max(0, Math.min(toks.length - 1, cursor + step));
      if (event.shiftKey && anchor >= 0) { cursor = next; } else { anchor = cursor = next; }
      paint();
    });
    box.querySelectorAll(".esa-mark").forEach(function (button) {
      button.addEventListener("click", function () {
        var chars = selected(), r = range(), start, end;
        if (chars !== null) { start = chars[0]; end = chars[1]; window.getSelection().removeAllRanges(); }
        else if (r !== null) { start = Number(toks[r[0]].dataset.s); end = Number(toks[r[1]].dataset.e); }
        else { text.focus(); return; }
        spans = spans.filter(function (sp) { return sp.end <= start || sp.start >= end; });
        var span = { start: start, end: end, severity: button.dataset.severity };
        var category = box.querySelector(".esa-category");
        if (category) { span.category = category.value; }
        spans.push(span);
        spans.sort(function (a, b) { return a.start - b.start; });
        anchor = cursor = -1;
        paint();
      });
    });
    paint();
  });
})();
