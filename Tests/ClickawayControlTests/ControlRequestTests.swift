import ClickawayControl
import ClickawayCore
import ClickawayJSON
import Testing

@Suite struct ControlRequestTests {
    static let every: [ControlRequest] = [
        .sync, .status, .reload, .open(popup: "menu"), .close(popup: "menu"), .toggle(popup: "a-b"), .dismiss(popup: "cal"), .pick(timeoutMs: 5000),
        .hit(x: -5, y: 1080, button: 3), .monitor,
        .add(RuntimePopupRequest(form: .rect(.init(x: -5, y: 1, width: 30, height: 40), output: "DP-1"))),
        .add(RuntimePopupRequest(form: .window(0x1a00003), name: "cal", like: "calendar", parent: "bar",
                                 anchors: [.init(x: 1, y: 2, width: 3, height: 4)], options: PopupOptions([
                                     "outside_click": .string("replay"), "inside_click": .string("dismiss"), "trigger": .string("click"),
                                     "buttons": .array([.integer(1), .integer(3)]), "grace_ms": .integer(0), "escape": .boolean(true),
                                     "dismiss": .table(["command": .array(["eww", "close", "cal"].map(PopupLiteral.string))]),
                                 ]))),
        .wait(RuntimePopupRequest(form: .pid(4242, timeoutMs: 2500), options: PopupOptions(["dismiss": .string("kill")]))),
        .show(ShowRequest()), .show(ShowRequest(popups: ["menu", "cal"], seconds: 3600, all: true)), .show(.stop),
    ]

    @Test(arguments: every)
    func encodingDecodesToTheSameRequest(_ request: ControlRequest) throws {
        #expect(try ControlRequest(line: request.json.text) == request)
        #expect(request.json["request"]?.stringValue == request.name.rawValue)
    }

    @Test func everyNameHasARequest() {
        #expect(Set(Self.every.map(\.name)) == Set(ControlRequest.Name.allCases))
    }

    @Test func hitTakesButtonOneWhenNoneIsGiven() throws {
        #expect(try ControlRequest(line: #"{"request":"hit","x":1,"y":2}"#) == .hit(x: 1, y: 2, button: 1))
    }

    @Test(arguments: [
        ("hello", "malformed request: "),
        (#"[1,2,3]"#, #"a request is an object with a "request" key"#),
        (#"{"request":42}"#, #"a request is an object with a "request" key"#),
        (#"{"request":"explode"}"#, #"unknown request "explode" (known: sync, status, reload, open, close, toggle, dismiss, hit, monitor, add, wait, pick, show)"#),
        (#"{"request":"open"}"#, #"this request needs the popup's name: {"request":"open","popup":"NAME"}"#),
        (#"{"request":"hit","x":1.5,"y":2}"#, "hit needs integer coordinates"),
        (#"{"request":"hit","x":1,"y":99999999999}"#, "hit needs integer coordinates"),
        (#"{"request":"hit","x":1,"y":2,"button":0}"#, "button must be 1 to 255, not 0"),
        (#"{"request":"hit","x":1,"y":2,"button":256}"#, "button must be 1 to 255, not 256"),
        (#"{"request":"show","seconds":0}"#, #"show: "seconds" is a whole number from 1 to 3600"#),
        (#"{"request":"show","popups":"menu"}"#, #"show: "popups" is a list of names"#),
        (#"{"request":"show","for":3}"#, #"show: unknown key "for""#),
        (#"{"request":"show","off":1}"#, #"show: "off" is true or false"#),
    ])
    func invalidRequestsSayWhatIsWrong(_ line: String, _ message: String) {
        #expect {
            try ControlRequest(line: line)
        } throws: { error in
            "\(error)".hasPrefix(message) || "\(error)".contains(message)
        }
    }
}

@Suite struct ControlReplyTests {
    @Test func repliesDecodeWhatTheyEncode() throws {
        let reload = ReloadReply(popups: 3, files: ["/a.toml", "/b.toml"])
        #expect(reload.json.text == #"{"ok":true,"popups":3,"files":["/a.toml","/b.toml"]}"#)
        #expect(try ReloadReply(reply: reload.json) == reload)
        let rect = RectPopupReply(popup: "menu", open: true)
        #expect(rect.json.text == #"{"ok":true,"popup":"menu","open":true}"#)
        #expect(try RectPopupReply(reply: rect.json) == rect)
        let show = ShowReply(popups: ["menu"], seconds: 5, outputs: 2)
        #expect(show.json.text == #"{"ok":true,"popups":["menu"],"seconds":5,"outputs":2,"stopped":false}"#)
        #expect(try ShowReply(reply: show.json) == show)
        let refusal = Refusal("the new configuration was rejected", diagnostics: "a.toml:1:1: error")
        #expect(refusal.json.text == #"{"ok":false,"error":"the new configuration was rejected","diagnostics":"a.toml:1:1: error"}"#)
        #expect(Refusal(reply: refusal.json) == refusal)
        #expect(Refusal(reply: ControlReply.ok()) == nil)
        #expect(ControlReply.ok().text == #"{"ok":true}"#)
    }

    @Test func monitorEventsEncodeTheirDocumentedFields() {
        let samples: [MonitorEvent] = [
            .opened(OpenPopup(popup: "p", window: "0x1", rect: .init(x: 1, y: 2, width: 3, height: 4))),
            .closed(OpenPopup(popup: "p", window: nil, rect: .init(x: 1, y: 2, width: 3, height: 4))),
            .family(OpenPopup(popup: "p", window: "0x1", rect: .init(x: 1, y: 2, width: 3, height: 4), members: ["0x2"])),
            .dismissed(.init(popups: ["p"], reason: "outside", button: 1, x: 5, y: 6, click: "swallow")),
            .reloaded(cause: "SIGHUP", popups: 1, files: []),
            .rejected(cause: "SIGHUP", diagnostics: "x"),
            .grabRefused(.button(1, modifiers: "no modifiers", error: "BadAccess", message: "m")),
            .backend(backend: "x11-shield", reason: "r"),
        ]
        #expect(Set(samples.map(\.name)) == Set(MonitorEvent.Name.allCases))
        for event in samples {
            let keys = event.json.objectKeys
            #expect(keys.first == "event")
            let documented = MonitorEvent.documentation.first { $0.events.contains(event.name) }
            #expect(Array(keys.dropFirst()) == documented?.fields, "\(event.json.text)")
        }
        #expect(MonitorEvent.grabRefused(.key("Escape", message: "m")).json.text == #"{"event":"grab_refused","key":"Escape","message":"m"}"#)
        #expect(samples[1].json.text == #"{"event":"closed","popup":"p","window":null,"rect":[1,2,3,4],"runtime":false,"members":[],"ties":{}}"#)
        #expect(samples[2].json.text
            == #"{"event":"family","popup":"p","window":"0x1","rect":[1,2,3,4],"runtime":false,"members":["0x2"],"ties":{"0x2":"transient-for"}}"#)
    }

    @Test func statusDecodesWhatItEncodes() throws {
        let x11 = StatusReport(
            backend: "x11-grab",
            display: .x11(X11Status(
                fallback: nil, display: ":1",
                grab: GrabStatus(active: true, buttons: [1, 3], held: [.init(button: 1, modifiers: "no modifiers")],
                                 refused: [.init(button: 3, modifiers: "CapsLock", error: "BadAccess")]),
                shield: ShieldStatus(window: "0x200001", mapped: true, holes: [.init(x: 0, y: 0, width: 10, height: 10)]),
                escape: EscapeStatus(active: false, refused: [.init(modifiers: "NumLock", error: "BadAccess")]))),
            config: ["/c.toml"], popups: 2, rejected: "bad", running: .lastGood(file: "/s", saved: "today"),
            unavailable: ["u"], open: [OpenPopup(popup: "bench", window: "0x1", rect: .init(x: 1, y: 2, width: 3, height: 4), runtime: true)],
            waiting: [WaitingPopup(popup: "yad", pid: 42)], monitors: 1, lastError: "e")
        #expect(try StatusReport(reply: x11.json) == x11)
        var counted = x11
        counted.open = [OpenPopup(popup: "menu", window: "0x1", rect: .init(x: 1, y: 2, width: 3, height: 4), members: ["0x2"],
                                  ties: ["same-client"], membersLeftOut: 7)]
        counted.openLeftOut = 300
        #expect(try StatusReport(reply: counted.json) == counted)
        #expect(counted.json.objectKeys.contains("open_left_out") && !x11.json.objectKeys.contains("open_left_out"))
        #expect(counted.text.contains("\n  and 300 more\n"), "\(counted.text)")
        #expect(counted.open[0].fields.map(\.0).last == "members_left_out")
        #expect(counted.open[0].membersText == "0x2 (\(FamilyTie.sameClient.sentence)), and 7 more")
        #expect(x11.json.objectKeys == ["ok", "backend", "fallback", "display", "config", "popups", "rejected", "running",
                                        "last_good", "unavailable", "grab", "shield", "escape", "open", "waiting", "monitors", "last_error"])
        let wayland = StatusReport(
            backend: "wayland",
            display: .wayland(WaylandStatus(
                display: "wayland-1",
                overlay: OverlayStatus(outputs: [.init(name: "HEADLESS-1", rect: .init(x: 0, y: 0, width: 1280, height: 720))],
                                       holes: [], pointer: true, touch: false, tablets: true, replay: "zwlr_virtual_pointer_v1"),
                windows: .sway(SwayStatus(socket: "/run/sway.sock", windows: 2)))),
            config: [], popups: 0, rejected: nil, running: .files, unavailable: [], open: [], monitors: 0, lastError: nil)
        #expect(try StatusReport(reply: wayland.json) == wayland)
        #expect(wayland.json.objectKeys == ["ok", "backend", "display", "config", "popups", "rejected", "running", "last_good",
                                            "unavailable", "overlay", "sway", "kwin", "gnome", "open", "waiting", "monitors", "last_error"])
        #expect(wayland.text.contains("sway:     2 windows with a role, through /run/sway.sock"))
        var kwin = wayland
        guard case .wayland(var status) = kwin.display else { return }
        status.windows = .kwin(KWinStatus(script: "/run/user/1000/clickaway-kwin.js", version: 6, windows: 3))
        kwin.display = .wayland(status)
        #expect(try StatusReport(reply: kwin.json) == kwin)
        #expect(kwin.text.contains("kwin:     3 windows with a role, through the script /run/user/1000/clickaway-kwin.js (KWin 6)"))
        var gnome = wayland
        gnome.backend = "gnome"
        for waiting in [nil, "the extension was disabled"] {
            status.windows = .gnome(GnomeStatus(uuid: "clickaway@clickaway.github.io", connected: waiting == nil, shell: "43.9",
                                                windows: 2, waiting: waiting))
            gnome.display = .wayland(status)
            #expect(try StatusReport(reply: gnome.json) == gnome)
        }
        #expect(gnome.text.contains("gnome:    the extension clickaway@clickaway.github.io is not connected: the extension was disabled"))
        status.windows = nil
        kwin.display = .wayland(status)
        #expect(try StatusReport(reply: kwin.json) == kwin)
        #expect(kwin.text.contains("windows:  neither sway's IPC ($SWAYSOCK) nor KWin's scripting: rect popups only"))
        #expect(x11.text.contains("refused:  button 3 with CapsLock (BadAccess)"))
        #expect(x11.text.contains("  bench  window 0x1  [1, 2, 3, 4]  (runtime)"))
        #expect(x11.text.contains("waiting:  yad (runtime) for a window of process 42"))
    }
}

extension JSON {
    var objectKeys: [String] {
        guard case .object(let pairs) = self else { return [] }
        return pairs.map(\.0)
    }
}

@Suite struct RuntimePopupRequestTests {
    @Test func theShortestFormsAreRequests() throws {
        #expect(try ControlRequest(line: #"{"request":"add","rect":[1,2,3,4]}"#)
                == .add(RuntimePopupRequest(form: .rect(.init(x: 1, y: 2, width: 3, height: 4), output: nil))))
        #expect(try ControlRequest(line: #"{"request":"wait","pid":7}"#)
                == .wait(RuntimePopupRequest(form: .pid(7, timeoutMs: RuntimePopupRequest.defaultTimeoutMs))))
    }

    @Test(arguments: [
        (#"{"request":"add"}"#, #"add needs exactly one of "rect", "window" and "pid""#),
        (#"{"request":"wait","window":1,"pid":2}"#, "not window and pid"),
        (#"{"request":"add","rect":[1048577,0,1,1]}"#, #""rect" must be [x, y, width, height]"#),
        (#"{"request":"add","rect":[0,0,1,1048577]}"#, #""rect" must be"#),
        (#"{"request":"add","rect":[0,0,1.5,1]}"#, #""rect" must be"#),
        (#"{"request":"add","window":4294967296}"#, #""window" must be an integer from 1 to 4294967295"#),
        (#"{"request":"add","pid":2147483648}"#, #""pid" must be an integer from 1 to 2147483647"#),
        (#"{"request":"add","pid":1,"timeout_ms":-1}"#, #""timeout_ms" must be an integer from 0 to 60000"#),
        (#"{"request":"add","window":1,"output":"DP-1"}"#, #""output" goes with "rect" only"#),
        (#"{"request":"add","rect":[0,0,1,1],"output":""}"#, #""output" must be a string of 1 to 256 bytes"#),
        (#"{"request":"add","rect":[0,0,1,1],"popup":"x","parent":"x"}"#, "a popup cannot be its own parent"),
        (#"{"request":"add","rect":[0,0,1,1],"like":"a.b"}"#, #""like" must be a popup name"#),
        (#"{"request":"add","rect":[0,0,1,1],"outside_click":"eat"}"#, #""outside_click" must be one of "swallow", "replay""#),
        (#"{"request":"add","rect":[0,0,1,1],"trigger":1}"#, #""trigger" must be one of "press", "click""#),
        (#"{"request":"add","rect":[0,0,1,1],"inside_click":"close"}"#, #""inside_click" must be one of "pass", "dismiss""#),
        (#"{"request":"add","rect":[0,0,1,1],"buttons":[]}"#, #""buttons" must be an array of buttons 1 to 31"#),
        (#"{"request":"add","rect":[0,0,1,1],"buttons":[32]}"#, #""buttons" must be an array of buttons 1 to 31"#),
        (#"{"request":"add","rect":[0,0,1,1],"grace_ms":3600001}"#, #""grace_ms" must be an integer from 0 to 3600000"#),
        (#"{"request":"add","rect":[0,0,1,1],"dismiss":{"command":["a"],"shell":true}}"#, #""dismiss" must be"#),
        (#"{"request":"add","rect":[0,0,1,1],"dismiss":{"command":[1]}}"#, "a command of strings"),
        (#"{"request":"add","rect":[0,0,1,1],"anchors":"x"}"#, #""anchors" must be an array of at most 32 rectangles"#),
        (#"{"request":"add","rect":[0,0,1,1],"rekt":1}"#, #"unknown key "rekt"; did you mean "rect"?"#),
    ])
    func invalidFieldsSayWhichAndWhatIsExpected(_ line: String, _ message: String) {
        #expect {
            try ControlRequest(line: line)
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    @Test func limitsOfCommandsAndAnchors() {
        let tooMany = JSON.array(Array(repeating: JSON.string("a"), count: RuntimePopupRequest.maxArguments + 1))
        #expect(throws: ControlRequest.Invalid.self) {
            try ControlRequest(json: .object([("request", .string("add")), ("rect", .array([0, 0, 1, 1].map { JSON.int($0) })),
                                              ("dismiss", .object([("command", tooMany)]))]))
        }
        let long = JSON.array([.string(String(repeating: "x", count: RuntimePopupRequest.maxArgumentBytes + 1))])
        #expect(throws: ControlRequest.Invalid.self) {
            try ControlRequest(json: .object([("request", .string("add")), ("rect", .array([0, 0, 1, 1].map { JSON.int($0) })),
                                              ("dismiss", .object([("command", long)]))]))
        }
        let anchors = JSON.array(Array(repeating: JSON.array([0, 0, 1, 1].map { JSON.int($0) }), count: RuntimePopupRequest.maxAnchors + 1))
        #expect(throws: ControlRequest.Invalid.self) {
            try ControlRequest(json: .object([("request", .string("add")), ("rect", .array([0, 0, 1, 1].map { JSON.int($0) })),
                                              ("anchors", anchors)]))
        }
    }

    /// Every field of a complete request replaced by every kind of hostile value: each
    /// decodes to a request that encodes back to itself, or is refused; nothing else happens.
    @Test func hostileValuesInEveryFieldAreRefusedOrRoundTrip() throws {
        let base: [(String, JSON)] = [
            ("request", .string("wait")), ("popup", .string("p")), ("rect", .array([1, 2, 3, 4].map { JSON.int($0) })),
            ("output", .string("DP-1")), ("like", .string("l")), ("parent", .string("q")),
            ("anchors", .array([.array([1, 2, 3, 4].map { JSON.int($0) })])), ("outside_click", .string("replay")),
            ("trigger", .string("click")), ("buttons", .array([.int(1)])), ("grace_ms", .int(5)), ("escape", .bool(true)),
            ("dismiss", .object([("command", .array([.string("true")]))])),
        ]
        let hostile: [JSON] = [
            .null, .bool(false), .int(-1), .int(0), .int(Int64.max), .int(Int64.min), .number(1.5), .string(""),
            .string(String(repeating: "x", count: 5000)), .string("a\u{0}b"), .string("../../etc"), .array([]),
            .array([.null]), .array(Array(repeating: .int(1), count: 40)), .object([]), .object([("command", .null)]),
            .object([("command", .array([.string("")]))]), .array([.array([.int(1), .int(2)])]),
        ]
        var accepted: [String] = []
        for index in base.indices.dropFirst() {
            for value in hostile {
                var fields = base
                fields[index].1 = value
                do {
                    let request = try ControlRequest(json: .object(fields))
                    #expect(try ControlRequest(json: request.json) == request, "\(JSON.object(fields).text)")
                    accepted.append("\(base[index].0)=\(value.text.prefix(20))")
                } catch {
                    #expect(!error.description.isEmpty)
                }
            }
        }
        // What may be taken: a falsy flag, a grace of 0, no anchors, an output name that is only a name.
        #expect(Set(accepted) == [#"output="../../etc""#, "anchors=[]", "grace_ms=0", "escape=false"])
    }

    @Test func waitOutcomesDecodeWhatTheyEncode() throws {
        let outcomes: [WaitOutcome] = [
            .dismissed(popup: "cal", reason: "outside", button: 3, x: -4, y: 900, click: "replay"),
        ] + WaitOutcome.GoneReason.allCases.map { .gone(popup: "cal", reason: $0) }
        for outcome in outcomes { #expect(WaitOutcome(json: outcome.json) == outcome) }
        #expect(outcomes[0].json.text == #"{"event":"dismissed","popup":"cal","reason":"outside","button":3,"x":-4,"y":900,"click":"replay"}"#)
        #expect(WaitOutcome.gone(popup: "p", reason: .windowGone).json.text == #"{"event":"gone","popup":"p","reason":"window-gone"}"#)
        #expect(WaitOutcome(json: #"{"ok":false,"error":"x"}"#.json) == nil)
        let reply = RuntimePopupReply(popup: "runtime-1", window: nil)
        #expect(reply.json.text == #"{"ok":true,"popup":"runtime-1","window":null}"#)
        #expect(try RuntimePopupReply(reply: reply.json) == reply)
    }
}

private extension String {
    var json: JSON { (try? JSON.parse(self)) ?? .null }
}
