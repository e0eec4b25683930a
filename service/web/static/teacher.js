// The teacher's pages. The regrade page: follow the regrade's progress, then show its old and
// new scores. The gradebook and a lesson's page: while the LMS's results are being read,
// say when the read is done and offer the page again, never reloading it under the teacher
// (a lesson's page holds the settings form). Without this script the pages still work;
// reload them to see the progress.
(function () {
  "use strict";
  var box = document.querySelector("[data-progress-url]");
  if (!box) {
    return;
  }
  var bar = document.getElementById("regrade-bar");
  var done = document.getElementById("regrade-done");
  var timer = setInterval(async function () {
    try {
      var response = await window.CodeBlanksSession.request(box.dataset.progressUrl);
      if (!response.ok) {
        return;
      }
      var state = await response.json();
      bar.value = state.done;
      done.textContent = String(state.done);
      if (state.finished) {
        clearInterval(timer);
        // the page, with a fresh link token in its URL, now shows every new score
        window.CodeBlanksSession.link(box.dataset.pageUrl).then(function (url) {
          window.location.assign(url);
        });
      }
    } catch (error) {
      // offline for a moment: the next tick tries again
    }
  }, 1500);
})();

(function () {
  "use strict";
  var box = document.querySelector("[data-results-url]");
  if (!box || !window.CodeBlanksSession) {
    return;
  }
  // a read takes a second or two; one whose LMS is away retries for about half a minute
  var POLL_MS = 2000;
  var GIVE_UP_MS = 120000;
  var started = Date.now();
  var timer = setInterval(async function () {
    if (Date.now() - started > GIVE_UP_MS) {
      clearInterval(timer);
      return;
    }
    try {
      var response = await window.CodeBlanksSession.request(box.dataset.resultsUrl);
      if (!response.ok) {
        return;
      }
      var state = await response.json();
      if (state.reading.length === 0) {
        clearInterval(timer);
        document.querySelectorAll("[data-results-pending]").forEach(function (status) {
          status.querySelector("span").hidden = true;
          status.querySelector("a").hidden = false;
        });
      }
    } catch (error) {
      // offline for a moment: the next tick tries again
    }
  }, POLL_MS);
})();
