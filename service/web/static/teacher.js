// The regrade page: follow the regrade's progress, then show its old and new scores.
// Without this script the page still works; reload it to see the progress.
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
      var response = await fetch(box.dataset.progressUrl, {
        headers: {
          "X-CodeBlanks-Session": window.CodeBlanksSession.token,
          Accept: "application/json",
        },
        credentials: "same-origin",
      });
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
