// Every page of a session: its token for the scripts' requests, and links that die when idle.
//
// The session travels with the page (service/web/auth.py): the page's scripts send the long
// session token as the X-CodeBlanks-Session header; links, form actions and the live status
// stream carry a link token as `s`, which lives LINK_LIFETIME (15 minutes) from its signing.
// While the page is in use this script signs a fresh one through the API and puts it in every
// link and form, so a link copied from a page left idle dies soon after. The address bar of a
// page of its own (not inside the LMS's frame) keeps no token at all, so a copied address
// carries none; inside a frame the address keeps a fresh one, for "reload frame".
// Without this script the page still works: its links carry the token it was rendered with.
(function () {
  "use strict";
  var meta = document.querySelector('meta[name="codeblanks-session"]');
  if (!meta) {
    return;
  }
  var token = meta.content;
  var link = meta.dataset.link;
  var LIFETIME_MS = Number(meta.dataset.linkLifetimeS) * 1000;
  // renew on activity at most once a minute, and always before following a link older than
  // a third of its life: it then has two thirds left for the request
  var RENEW_AFTER_MS = Math.min(60000, LIFETIME_MS / 3);
  var signedAt = Date.now();
  var renewing = null;
  var framed = window.top !== window;

  function withLink(url, fresh) {
    var parsed = new URL(url, window.location.href);
    if (parsed.origin !== window.location.origin) {
      return url;
    }
    if (fresh === null) {
      parsed.searchParams.delete("s");
    } else {
      parsed.searchParams.set("s", fresh);
    }
    return parsed.pathname + parsed.search + parsed.hash;
  }

  function carries(url) {
    if (!url) {
      return false;
    }
    var parsed = new URL(url, window.location.href);
    return parsed.origin === window.location.origin && parsed.searchParams.has("s");
  }

  function address(fresh) {
    if (carries(window.location.href)) {
      window.history.replaceState(window.history.state, "", withLink(window.location.href, fresh));
    }
  }

  function put(fresh) {
    document.querySelectorAll("a[href]").forEach(function (a) {
      if (carries(a.getAttribute("href"))) {
        a.setAttribute("href", withLink(a.getAttribute("href"), fresh));
      }
    });
    document.querySelectorAll("form[action]").forEach(function (form) {
      if (carries(form.getAttribute("action"))) {
        form.setAttribute("action", withLink(form.getAttribute("action"), fresh));
      }
    });
    document.querySelectorAll("[data-page-url]").forEach(function (box) {
      box.dataset.pageUrl = withLink(box.dataset.pageUrl, fresh);
    });
    if (framed) {
      address(fresh);
    }
  }

  // fetch() with the session: the one way the pages' scripts call the tool (JSON answers)
  function request(url, options) {
    var sent = Object.assign({ credentials: "same-origin" }, options || {});
    sent.headers = Object.assign(
      { "X-CodeBlanks-Session": token, Accept: "application/json" },
      sent.headers || {},
    );
    return fetch(url, sent);
  }

  // a fresh link token, signed for this session through the API, put in every link; offline,
  // the links keep the one they have
  function renew() {
    if (!renewing) {
      renewing = request(meta.dataset.linkUrl, { method: "POST" })
        .then(function (response) {
          return response.ok ? response.json() : null;
        })
        .then(function (body) {
          if (body && body.token) {
            signedAt = Date.now();
            link = body.token;
            put(link);
          }
        })
        .catch(function () {})
        .finally(function () {
          renewing = null;
        });
    }
    return renewing;
  }

  function stale() {
    return Date.now() - signedAt > RENEW_AFTER_MS;
  }

  // a page of its own: the token leaves the address bar at once
  if (!framed) {
    address(null);
  }

  ["pointerdown", "keydown", "focusin", "contextmenu"].forEach(function (name) {
    document.addEventListener(name, function () {
      if (stale()) {
        renew();
      }
    }, true);
  });

  // following a link or sending a form with a token older than RENEW_AFTER_MS: renew, then go
  var passing = null;
  document.addEventListener("click", function (event) {
    var a = event.target.closest ? event.target.closest("a[href]") : null;
    if (!a || a === passing || event.defaultPrevented || event.button !== 0 ||
        event.ctrlKey || event.metaKey || event.shiftKey || event.altKey ||
        !carries(a.getAttribute("href")) || !stale()) {
      return;
    }
    event.preventDefault();
    renew().then(function () {
      passing = a;
      a.click();
      passing = null;
    });
  });
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (form === passing || event.defaultPrevented || !carries(form.getAttribute("action")) ||
        !stale()) {
      return;
    }
    event.preventDefault();
    var submitter = event.submitter;
    renew().then(function () {
      passing = form;
      if (form.requestSubmit) {
        form.requestSubmit(submitter || undefined);
      } else {
        form.submit();
      }
      passing = null;
    });
  });

  window.CodeBlanksSession = {
    token: token,
    request: request,
    // `url` with a link token fresh enough to be used now (the live status stream, a reload)
    link: function (url) {
      return (stale() ? renew() : Promise.resolve(null)).then(function () {
        return withLink(url, link);
      });
    },
  };
})();
