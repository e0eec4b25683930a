// The student's lesson page: answers checked in place, the code editor with an autosaved
// draft, and a submission followed live until its verdict shows.
//
// Progressive enhancement: without this script every form still posts (with the session
// in its action's `s` and a CSRF field) and the page comes back. With it, requests go
// through fetch() with the session in the X-CodeBlanks-Session header (inside an LMS
// iframe the cookie may never come back; session.js holds it), and the live status through
// an EventSource with a fresh link token as `?s=` (EventSource cannot set headers), falling
// back to polling (a stream whose token has died is refused and polls too).
// Nothing here loads anything from anywhere but this tool.
(function () {
  "use strict";
  var root = document.getElementById("lesson");
  if (!root) {
    return;
  }
  var session = window.CodeBlanksSession;
  var SAVE_AFTER_MS = 800;
  var POLL_MS = 1000;
  // the page's words in its language (service/web/i18n.py JS_WORDS), keyed by their English
  var WORDS = JSON.parse((document.getElementById("words") || {}).textContent || "{}");
  var LANG = document.documentElement.lang || "en";
  function t(english, fields) {
    var text = WORDS[english] || english;
    return text.replace(/\{(\w+)\}/g, function (whole, name) {
      return fields && name in fields ? fields[name] : whole;
    });
  }
  var STATES = {
    queued: t("Waiting for a grader…"),
    running: t("Running your code…"),
    graded: t("Graded."),
  };

  async function call(method, url, body) {
    var options = { method: method };
    if (body !== undefined) {
      options.headers = { "Content-Type": "application/json" };
      options.body = JSON.stringify(body);
    }
    var response = await session.request(url, options);
    var data = {};
    if (response.status !== 204) {
      try {
        data = await response.json();
      } catch (error) {
        data = {};
      }
    }
    return { status: response.status, body: data };
  }

  // ---- questions ----------------------------------------------------------------------

  function answerOf(form) {
    var kind = form.dataset.kind;
    if (kind === "choice") {
      var checked = form.querySelector("input[name=answer]:checked");
      return checked ? Number(checked.value) : null;
    }
    if (kind === "blank") {
      return form.querySelector("input[name=answer]").value;
    }
    var pairs = {};
    form.querySelectorAll("select[data-term]").forEach(function (select) {
      if (select.value) {
        pairs[select.dataset.term] = select.value;
      }
    });
    return pairs;
  }

  function showFeedback(box, result) {
    box.replaceChildren();
    var verdict = document.createElement("p");
    var strong = document.createElement("strong");
    if (result.correct) {
      verdict.className = "ok";
      strong.textContent = t("Correct.");
    } else if (result.earned > 0) {
      verdict.className = "partly";
      strong.textContent = t("Partly right.");
    } else {
      verdict.className = "bad";
      strong.textContent = t("Not right.");
    }
    var sentence = result.possible === 1
      ? "You earned {earned} of {possible} point."
      : "You earned {earned} of {possible} points.";
    verdict.append(strong, " " + t(sentence, {
      earned: points(result.earned), possible: points(result.possible),
    }));
    var explanation = document.createElement("p");
    explanation.className = "explanation";
    var label = document.createElement("strong");
    label.textContent = t("Explanation:");
    explanation.append(label, " " + result.explanation);
    box.append(verdict, explanation);
  }

  // as the LMS shows points (service/web/rendering.py lms_rounded): half up at 2 decimals,
  // decided on the 5 decimals Moodle stores (2.675 is 2.67499... as a float: it reads 2.68)
  function points(value) {
    var stored = Math.round(Math.abs(value) * 1e5);
    var shown = Math.sign(value) * Math.round(stored / 1e3) / 100;
    return new Intl.NumberFormat(LANG, { maximumFractionDigits: 2 }).format(shown);
  }

  document.querySelectorAll("form.answer-form").forEach(function (form) {
    form.addEventListener("submit", async function (event) {
      event.preventDefault();
      var box = form.querySelector("[data-feedback]");
      var button = form.querySelector("button[type=submit]");
      var answer = answerOf(form);
      if (answer === null) {
        return;
      }
      button.disabled = true;
      try {
        var result = await call("POST", root.dataset.answerUrl, {
          question_id: form.dataset.question,
          answer: answer,
        });
        if (result.status === 201 || result.status === 409) {
          form.querySelector("fieldset").disabled = true;
          button.remove();
          if (result.status === 201) {
            showFeedback(box, result.body);
          } else {
            box.textContent = result.body.message;
          }
          box.tabIndex = -1;
          box.focus();
          refresh();
        } else {
          box.textContent = result.body.message || t("The answer was not taken; try again.");
          button.disabled = false;
        }
      } catch (error) {
        box.textContent = t("The answer could not be sent; check your connection and try again.");
        button.disabled = false;
      }
    });
  });

  // ---- the editor and its draft ---------------------------------------------------------

  var textarea = document.getElementById("code");
  var submitForm = document.getElementById("submit-form");
  if (!textarea || !submitForm) {
    return;
  }
  var submitButton = document.getElementById("submit");
  var draftStatus = document.getElementById("draft-status");
  var runStatus = document.getElementById("run-status");
  var saved = textarea.value;
  var saveTimer = null;
  var editor = null;

  function code() {
    return editor ? editor.getValue() : textarea.value;
  }

  async function saveDraft() {
    var text = code();
    if (text === saved) {
      return;
    }
    try {
      var result = await call("PUT", root.dataset.draftUrl, { source: text });
      if (result.status === 204) {
        saved = text;
        draftStatus.textContent = t("Draft saved");
      } else {
        draftStatus.textContent = result.body.message || t("Draft not saved");
      }
    } catch (error) {
      draftStatus.textContent = t("Draft not saved (offline?)");
    }
  }

  function changed() {
    draftStatus.textContent = "";
    clearTimeout(saveTimer);
    saveTimer = setTimeout(saveDraft, SAVE_AFTER_MS);
  }

  if (window.CodeBlanksEditor) {
    editor = window.CodeBlanksEditor.mount(textarea, { onChange: changed, minHeight: "14em" });
  } else {
    textarea.addEventListener("input", changed);
  }

  // put code in the editor as if it were typed (the draft is then saved as usual), and give
  // the editor the focus; in the CodeMirror editor, Ctrl+Z takes it back
  function putCode(text) {
    if (editor) {
      editor.setValue(text); // its onChange is changed()
      editor.focus();
    } else {
      textarea.value = text;
      changed();
      textarea.focus();
    }
  }

  var reset = document.getElementById("reset");
  var starter = document.getElementById("starter");
  if (reset && starter) {
    reset.hidden = false;
    reset.addEventListener("click", function () {
      if (window.confirm(t("Replace your code with the starter code?"))) {
        var text = starter.content.textContent;
        if (editor) {
          editor.setValue(text);
          editor.focus();
        } else {
          textarea.value = text;
          changed();
        }
      }
    });
  }

  // ---- submitting, and following the submission ------------------------------------------

  function setStatus(text) {
    runStatus.textContent = text;
  }

  async function refresh() {
    try {
      var result = await call("GET", root.dataset.progressUrl);
      if (result.status !== 200) {
        return null;
      }
      document.getElementById("score").innerHTML = result.body.score;
      document.getElementById("results").innerHTML = result.body.results;
      return result.body;
    } catch (error) {
      return null;
    }
  }

  async function graded() {
    var body = await refresh();
    var verdict = document.getElementById("verdict");
    setStatus(verdict
      ? t("Graded: {verdict}", { verdict: verdict.querySelector("h3").textContent.trim() })
      : t("Graded."));
    submitButton.disabled = Boolean(body && body.closed);
    if (body && body.closed) {
      setStatus(runStatus.textContent + " " + body.closed);
    }
    if (verdict) {
      verdict.focus();
    }
    return body;
  }

  function poll(url) {
    var timer = setInterval(async function () {
      try {
        var result = await call("GET", url);
        if (result.status === 200) {
          setStatus(STATES[result.body.status] || "");
          if (result.body.status === "graded") {
            clearInterval(timer);
            graded();
          }
        } else if (result.status !== 503) {
          clearInterval(timer);
          setStatus(result.body.message || t("The submission could not be followed; reload."));
          submitButton.disabled = false;
        }
      } catch (error) {
        setStatus(t("Connection lost; still trying…"));
      }
    }, POLL_MS);
  }

  function follow(url) {
    setStatus(STATES.queued);
    submitButton.disabled = true;
    if (!window.EventSource) {
      poll(url);
      return;
    }
    session.link(url + "/events").then(function (events) {
      listen(url, events);
    });
  }

  function listen(url, events) {
    // the server keeps each stream short (a few seconds) and ends it with `timeout`; the
    // browser then reconnects by itself and the new stream starts with the status again
    var stream = new EventSource(events);
    var done = false;
    var reconnecting = false;
    var failures = 0;
    function toPolling() {
      if (!done) {
        done = true;
        stream.close();
        poll(url);
      }
    }
    stream.addEventListener("status", function (event) {
      failures = 0;
      var state = JSON.parse(event.data);
      setStatus(STATES[state.status] || "");
      if (state.status === "graded" && !done) {
        done = true;
        stream.close();
        graded();
      }
    });
    stream.addEventListener("end", function () {
      stream.close();
    });
    stream.addEventListener("timeout", function () {
      reconnecting = true;
    });
    // the server has as many streams open as it allows: follow by polling instead
    stream.addEventListener("busy", toPolling);
    stream.onerror = function () {
      if (reconnecting) {
        reconnecting = false; // a stream that ended on purpose, not a failure
        return;
      }
      // a stream that keeps failing, or is refused, gives way to polling
      failures += 1;
      if (stream.readyState === EventSource.CLOSED || failures > 2) {
        toPolling();
      }
    };
  }

  submitForm.addEventListener("submit", async function (event) {
    event.preventDefault();
    var source = code();
    submitButton.disabled = true;
    setStatus(t("Sending your code…"));
    try {
      var result = await call("POST", root.dataset.submitUrl, { source: source });
      if (result.status === 202) {
        clearTimeout(saveTimer);
        saveDraft();
        follow(result.body.url);
      } else {
        setStatus(result.body.message || t("Your code was not taken; try again."));
        submitButton.disabled = false;
      }
    } catch (error) {
      setStatus(t("Your code could not be sent; check your connection and try again."));
      submitButton.disabled = false;
    }
  });

  if (root.dataset.pendingUrl) {
    follow(root.dataset.pendingUrl);
  }

  // ---- the attempts: one shown in place, and put back in the editor ----------------------
  // Each row of the attempts list (pages/_attempts.html) links to its attempt's page; here
  // the link fetches the attempt's JSON (service/web/student/attempt_pages.py) and shows its
  // `html` under the list, and that attempt's "Put back in the editor" form puts its
  // `source` in the editor instead of posting. The list is redrawn after each verdict
  // (refresh), so the listeners sit on #results, which stays.
  var results = document.getElementById("results");
  var shownAttempt = null; // the attempt on show: its number and code

  results.addEventListener("click", async function (event) {
    var link = event.target.closest("a[data-attempt-url]");
    if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) {
      return; // a new tab or window opens the attempt's own page
    }
    event.preventDefault();
    var box = document.getElementById("attempt-shown");
    try {
      var result = await call("GET", link.dataset.attemptUrl);
      if (result.status !== 200) {
        box.textContent = result.body.message || t("The attempt could not be shown; try again.");
        return;
      }
      box.innerHTML = result.body.html;
      shownAttempt = { number: result.body.number, source: result.body.source };
      box.querySelector("[tabindex='-1']").focus();
    } catch (error) {
      box.textContent = t("The attempt could not be shown; check your connection and try again.");
    }
  });

  results.addEventListener("submit", function (event) {
    var form = event.target.closest("#attempt-shown form.restore-form");
    if (!form || shownAttempt === null) {
      return;
    }
    event.preventDefault();
    putCode(shownAttempt.source);
    form.closest(".attempt").querySelector(".restore-status").textContent = t(
      "The code of attempt {number} is in the editor; it is saved as your draft. Ctrl+Z in the editor takes it back.",
      { number: shownAttempt.number },
    );
  });

  // ---- practice runs: the Run button (no attempt, no score) ------------------------------
  // Run posts the code, and the input box's text when the lesson shows one, to the JSON API,
  // follows the run by polling GET /api/runs/<id>, then shows it under the editor as the
  // server renders it (pages/_practice.html, the verdict's partials). A run takes tens of
  // milliseconds on the warm pool: polling soon and then less often shows it at once and
  // costs a handful of small reads, where a stream would hold a web thread for each run.
  // Pressing Run again replaces the run followed; the old one stops at its next case.
  var runButton = document.getElementById("run");
  var stdinBox = document.getElementById("stdin");
  var practiceBox = document.getElementById("practice");
  var practiceStatus = document.getElementById("practice-status");
  var PRACTICE_POLLS_MS = [40, 60, 100, 150, 250, 400, 600, 1000]; // then every second
  var PRACTICE_FOLLOW_MS = 10 * 60 * 1000; // a page left open stops asking after this
  var PRACTICE_STATES = {
    queued: t("Your practice run is waiting for a sandbox…"),
    running: t("Running your code (a practice run)…"),
    done: t("Practice run done."),
  };
  var following = 0; // the id of the run this page follows (0: none)

  function wait(ms) {
    return new Promise(function (resolve) {
      setTimeout(resolve, ms);
    });
  }

  async function showPractice(runId) {
    var result = await call("GET", root.dataset.practiceUrl + runId);
    if (result.status !== 200 || runId !== following) {
      return;
    }
    practiceBox.innerHTML = result.body.practice;
    var shown = document.getElementById("practice-result");
    var verdict = shown && shown.querySelector(".practice-verdict");
    practiceStatus.textContent = verdict
      ? t("Practice run done: {verdict}", { verdict: verdict.textContent.trim() })
      : PRACTICE_STATES.done;
    if (shown) {
      shown.focus();
    }
  }

  async function followPractice(runId, url) {
    following = runId;
    var started = Date.now();
    for (var step = 0; Date.now() - started < PRACTICE_FOLLOW_MS; step += 1) {
      await wait(PRACTICE_POLLS_MS[Math.min(step, PRACTICE_POLLS_MS.length - 1)]);
      if (runId !== following) {
        return; // a newer run replaced it
      }
      try {
        var result = await call("GET", url);
        if (runId !== following) {
          return;
        }
        if (result.status === 200) {
          var state = result.body;
          practiceStatus.textContent = state.waiting
            ? t("Waiting for your previous run to stop…")
            : PRACTICE_STATES[state.status] || "";
          if (state.status === "done") {
            await showPractice(runId);
            return;
          }
        } else if (result.status !== 503) {
          practiceStatus.textContent = result.body.message
            || t("The practice run could not be followed; reload.");
          return;
        }
      } catch (error) {
        practiceStatus.textContent = t("Connection lost; still trying…");
      }
    }
    practiceStatus.textContent = t("The practice run could not be followed; reload.");
  }

  if (runButton && practiceBox) {
    runButton.addEventListener("click", async function (event) {
      event.preventDefault(); // without this script, the button posts the form to the page
      var body = { source: code() };
      if (stdinBox) {
        body.stdin = stdinBox.value;
      }
      following = 0;
      practiceStatus.textContent = t("Sending your code…");
      try {
        var result = await call("POST", root.dataset.runUrl, body);
        if (result.status === 202) {
          clearTimeout(saveTimer);
          saveDraft();
          practiceStatus.textContent = PRACTICE_STATES.queued;
          followPractice(result.body.id, result.body.url);
        } else {
          practiceStatus.textContent = result.body.message || t("Your code was not taken; try again.");
        }
      } catch (error) {
        practiceStatus.textContent = t(
          "Your code could not be sent; check your connection and try again.");
      }
    });
    var pendingRun = root.dataset.practicePendingUrl;
    if (pendingRun) {
      followPractice(Number(pendingRun.split("/").pop()), pendingRun);
    }
  }
  // ---- end of practice runs ---------------------------------------------------------------
})();
