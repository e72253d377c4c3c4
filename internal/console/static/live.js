// Live progress of a batch page: the page names its event stream in
// <body data-live-url>, and every element with data-live="name" shows the
// field of that name of each progress event. Without JavaScript the page
// shows the numbers of when it was loaded.
(function () {
  "use strict";
  var url = document.body.getAttribute("data-live-url");
  if (!url || !window.EventSource) { return; }
  var es = new EventSource(url);
  es.addEventListener("progress", function (ev) {
    var p;
    try { p = JSON.parse(ev.data); } catch (e) { return; }
    var els = document.querySelectorAll("[data-live]");
    for (var i = 0; i < els.length; i++) {
      var name = els[i].getAttribute("data-live");
      if (Object.prototype.hasOwnProperty.call(p, name)) {
        els[i].textContent = String(p[name]);
      }
    }
    var bar = document.querySelector("[data-live-progress]");
    if (bar) { bar.max = p.reviews; bar.value = p.ended; }
    document.body.setAttribute("data-live-updated", String(Date.now()));
  });
  es.addEventListener("ended", function () { es.close(); });
  es.addEventListener("gone", function () { es.close(); });
})();
