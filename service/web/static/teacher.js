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
        headers: { "X-CodeBlanks-Session": box.dataset.token, Accept: "application/json" },
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
        // the page, with the session in its URL, now shows every new score
        window.location.assign(box.dataset.pageUrl);
      }
    } catch (error) {
      // offline for a moment: the next tick tries again
    }
  }, 1500);
})();
