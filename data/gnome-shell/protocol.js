// Written from Sources/ClickawayDaemon/Gnome/GnomeProtocol.swift (GnomeProtocol.javaScript); a test holds it to it.
const PROTOCOL = Object.freeze({
    version: 1,
    uuid: "clickaway@clickaway.github.io",
    busName: "io.github.clickaway",
    path: "/io/github/clickaway/Gnome",
    iface: "io.github.clickaway.Gnome1",
    answerLimitMs: 1000,
    pinholeMs: 100,
    ev: Object.freeze({ hello: "hello", press: "press", release: "release", escape: "escape", window: "window", gone: "gone", stacking: "stacking", monitors: "monitors", pong: "pong", refused: "refused", layerDown: "layer-down", bye: "bye" }),
    cmd: Object.freeze({ answer: "answer", holes: "holes", close: "close", escape: "escape", ping: "ping", show: "show" }),
    answers: Object.freeze(["swallow", "replay"]),
});
