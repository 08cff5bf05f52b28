internal import ClickawayJSON

/// The KWin script that is clickaway's window source on KWin, and the messages between it
/// and the daemon: defined here once, the script written from it at start.
///
/// The script reports each window (its frame, pid, class, title, transient parent, whether
/// it is an xdg_popup, visible, stacking) as it appears and changes, through `callDBus` to
/// the daemon's `Event(s)`, one JSON object a call; KWin keeps their order. The daemon's
/// commands come back as the reply to `Wait()`, a call the daemon holds until it has some
/// (a long poll: nothing in KWin lets D-Bus call into a running script), as a JSON array of
/// strings. KWin gives up on a call after 25 s, so the daemon answers a `Wait` after
/// `KWinScript.pollRenewalMs` with nothing, and the script asks again; a watchdog asks again
/// if a reply never came, and unloads the script once the daemon is gone from the bus.
/// What differs between KWin 5 and 6 (list and signal names) is decided in the script,
/// by whether `workspace.windowList` exists; the D-Bus object of a loaded script, by
/// `KWinWindows.run`. docs/design/kwin-scripting.md has what was run and what was read.
enum KWinScript {
    /// The name KWin knows the script by (`loadScript`, `unloadScript`).
    static let plugin = "clickaway"
    /// The daemon's object and interface the script calls.
    static let path = "/org/clickaway/KWin"
    static let interface = "org.clickaway.KWin"

    /// Events, the `event` of each object the script sends.
    enum Event: String {
        /// Once, first: `version` (5, 6) and every window.
        case hello
        /// A window appeared or changed: its whole description.
        case window
        /// A window is gone: `id`.
        case gone
        /// The answer to `ping N`: `ticket`; every event sent before it has come.
        case pong
        /// A window the daemon asked to close cannot be: `id`, `why`.
        case refused
    }

    /// Commands, the strings in a reply to `Wait`.
    static func close(_ window: UInt32) -> String { "close \(window)" }
    static func ping(_ ticket: Int) -> String { "ping \(ticket)" }

    /// How long the daemon holds a `Wait` with nothing to say (KWin's limit is 25 s).
    static let pollRenewalMs: Int64 = 20_000
    /// How often the script's watchdog looks for the daemon and a lost poll.
    static let watchdogMs = 10_000

    /// The script for the daemon whose connection is `busName`, process `pid` (its own
    /// overlay surfaces are left out).
    static func text(busName: String, pid: Int32) -> String {
        """
        // clickaway's window source on KWin, written by the clickaway daemon (pid \(pid)) and
        // loaded by it over D-Bus as "\(plugin)". It reports windows to the daemon and closes
        // those the daemon names; once the daemon is gone it unloads itself.
        var daemon = \(jsString(busName)), path = \(jsString(path)), iface = \(jsString(interface));
        var six = typeof workspace.windowList === "function";
        function windows() { return six ? workspace.windowList() : workspace.clientList(); }
        // Numbers by internalId; a window gone keeps its key in `closed`: KWin still signals
        // on it while it fades out, and must not make it a new window.
        var ids = {}, byId = {}, closed = {}, next = 0;
        function idOf(w) {
            var key = String(w.internalId);
            if (!(key in ids)) { ids[key] = ++next; byId[next] = w; }
            return ids[key];
        }
        function ours(w) { return w.pid === \(pid); }
        function describe(w) {
            var g = w.frameGeometry;
            return { id: idOf(w), x: Math.round(g.x), y: Math.round(g.y), width: Math.round(g.width), height: Math.round(g.height),
                     pid: w.pid, resourceClass: String(w.resourceClass || ""), resourceName: String(w.resourceName || ""),
                     title: String(w.caption || ""), parent: w.transientFor ? idOf(w.transientFor) : 0,
                     popup: !!w.popupWindow, visible: !w.minimized && !w.hidden && !w.deleted, stacking: w.stackingOrder };
        }
        function send(message) { callDBus(daemon, path, iface, "Event", JSON.stringify(message), take); }
        function report(w) {
            if (w.deleted || String(w.internalId) in closed) return;
            var message = describe(w);
            message.event = "\(Event.window.rawValue)";
            send(message);
        }
        function take(reply) {
            var commands;
            try { commands = JSON.parse(reply); } catch (e) { print("clickaway: a reply that is not JSON: " + reply); return; }
            for (var i = 0; i < commands.length; i++) {
                var words = String(commands[i]).split(" ");
                if (words[0] === "close") {
                    var w = byId[Number(words[1])];
                    if (!w) send({ event: "\(Event.refused.rawValue)", id: Number(words[1]), why: "the window is gone" });
                    else if (!w.closeable) send({ event: "\(Event.refused.rawValue)", id: Number(words[1]), why: "KWin says it cannot be closed" });
                    else w.closeWindow();
                } else if (words[0] === "ping") {
                    send({ event: "\(Event.pong.rawValue)", ticket: Number(words[1]) });
                }
            }
        }
        function watch(w) {
            if (ours(w)) return;
            var changes = [w.frameGeometryChanged, w.captionChanged, w.minimizedChanged, w.hiddenChanged, w.transientChanged,
                           w.stackingOrderChanged, w.windowShown, w.windowHidden];
            for (var i = 0; i < changes.length; i++) if (changes[i]) changes[i].connect(function () { report(w); });
            (six ? w.closed : w.windowClosed).connect(function () { gone(w); });
        }
        function gone(w) {
            var key = String(w.internalId);
            if (!(key in ids)) return;
            var id = ids[key];
            delete ids[key];
            closed[key] = true;
            delete byId[id];
            send({ event: "\(Event.gone.rawValue)", id: id });
        }
        (six ? workspace.windowAdded : workspace.clientAdded).connect(function (w) { if (!ours(w)) { watch(w); report(w); } });
        (six ? workspace.windowRemoved : workspace.clientRemoved).connect(gone);
        var all = windows().filter(function (w) { return !ours(w); });
        all.forEach(watch);
        send({ event: "\(Event.hello.rawValue)", version: six ? 6 : 5, windows: all.map(describe) });
        var asked = 0;
        function wait() {
            asked = Date.now();
            callDBus(daemon, path, iface, "Wait", function (reply) { asked = 0; take(reply); wait(); });
        }
        var watchdog = new QTimer();
        watchdog.interval = \(watchdogMs);
        watchdog.timeout.connect(function () {
            callDBus("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner", daemon, function (here) {
                if (!here) {
                    watchdog.stop();
                    callDBus("org.kde.KWin", "/Scripting", "org.kde.kwin.Scripting", "unloadScript", \(jsString(plugin)));
                } else if (asked !== 0 && Date.now() - asked > 24000) {
                    wait();
                }
            });
        });
        watchdog.start();
        wait();

        """
    }

    /// `text` as a JavaScript string literal: a JSON string is one.
    private static func jsString(_ text: String) -> String { JSON.string(text).text }
}
