import ClickawayConfig
import ClickawayControl
import ClickawayCore
import ClickawayJSON

/// The control socket's requests: one JSON object per line, `{"request":NAME,...}`, each
/// answered with one line `{"ok":true,...}` or `{"ok":false,"error":"..."}`.
extension Daemon {
    static let requestNames = ["sync", "status", "reload", "open", "close", "toggle", "hit", "monitor"]

    func answer(_ request: ControlServer.Request) {
        let reply: JSON
        do {
            let message = try JSON.parse(request.line)
            switch message["request"]?.stringValue {
            case "sync": reply = sync()
            case "status": reply = JSONReply.ok(status())
            case "reload":
                // Answered when the load is done (`finishReload`).
                requestReload(because: "clickawayctl reload", replyTo: request)
                return
            case "open": reply = setRectPopup(message, open: { _ in true })
            case "close": reply = setRectPopup(message, open: { _ in false })
            case "toggle": reply = setRectPopup(message, open: { !$0 })
            case "hit": reply = hit(message)
            case "monitor":
                guard control.subscribe(request.client) else {
                    reply = JSONReply.error("\(ControlServer.maxMonitors) monitors are connected already; close one first")
                    break
                }
                control.send(JSONReply.ok().text, to: request.client)
                return
            case let other?:
                reply = JSONReply.error("unknown request \"\(other)\" (known: \(Self.requestNames.joined(separator: ", ")))")
            case nil:
                reply = JSONReply.error("a request is an object with a \"request\" key, e.g. {\"request\":\"status\"}")
            }
        } catch {
            reply = JSONReply.error("malformed request: \(error)")
        }
        control.send(reply.text, to: request.client)
    }

    /// Answers once the display has handled everything sent before the request: the
    /// caller then sees the daemon in a settled state.
    private func sync() -> JSON {
        syncDisplay().map(JSONReply.error) ?? JSONReply.ok()
    }

    func reloadReply(_ result: Result<LoadedConfig, ConfigError>) -> JSON {
        switch result {
        case .success(let fresh):
            return JSONReply.ok([("popups", .int(Int64(fresh.popupCount))), ("files", .array(fresh.files.map(JSON.string)))])
        case .failure(let error):
            return .object([
                ("ok", .bool(false)),
                ("error", .string("the new configuration was rejected; the previous one keeps running")),
                ("diagnostics", .string("\(error)")),
            ])
        }
    }

    /// `open`, `close` and `toggle` of a `rect` popup. They only tell clickaway the popup's
    /// state: no dismiss action runs.
    private func setRectPopup(_ message: JSON, open wanted: (Bool) -> Bool) -> JSON {
        guard let name = message["popup"]?.stringValue else {
            return JSONReply.error("this request needs the popup's name: {\"request\":\"open\",\"popup\":\"NAME\"}")
        }
        let model = config.model
        guard let index = model.popupIndex(named: name) else {
            return JSONReply.error("no popup named \"\(name)\" in the configuration" + suggestion(name, model.popups.map(\.name)))
        }
        guard case .rect(_, let output) = model.popups[Int(index)].source else {
            return JSONReply.error("popup \"\(name)\" is a window popup: it is open while its window is mapped, "
                                   + "so it cannot be opened or closed by name")
        }
        let isOpen = rectOpen.contains { $0.name == name }
        let open = wanted(isOpen)
        if open && !isOpen {
            if let output, engine.outputs[output] == nil {
                return JSONReply.error("popup \"\(name)\" is placed on output \"\(output)\", which is not connected "
                                       + "(connected: \(engine.outputs.keys.sorted().joined(separator: ", ")))")
            }
            rectOpen.append((name, now(), nextRectID))
            nextRectID += 1
        } else if !open && isOpen {
            // Closing a parent closes its open children, as a dismissal would.
            let closing = Set([index] + descendants(of: index))
            rectOpen.removeAll { entry in model.popupIndex(named: entry.name).map(closing.contains) ?? true }
        }
        refresh()
        return JSONReply.ok([("popup", .string(name)), ("open", .bool(open))])
    }

    /// The popups nested in `popup`, at any depth.
    func descendants(of popup: Int32) -> [Int32] {
        let model = config.model
        let children = model.popups.indices.filter { model.parentOf[$0] == popup }.map(Int32.init)
        return children + children.flatMap(descendants(of:))
    }

    /// `hit X Y` against the live state: what a press there would do now.
    private func hit(_ message: JSON) -> JSON {
        guard let px = message["x"]?.intValue, let py = message["y"]?.intValue,
              let x32 = Int32(exactly: px), let y32 = Int32(exactly: py) else {
            return JSONReply.error("hit needs integer coordinates: {\"request\":\"hit\",\"x\":100,\"y\":200}")
        }
        let button = message["button"]?.intValue ?? 1
        guard let b = UInt8(exactly: button), b >= 1 else { return JSONReply.error("button must be 1 to 255, not \(button)") }
        let explanation = engine.explain(button: b, x: x32, y: y32, time: now())
        return JSONReply.ok([("explanation", explanation.json), ("text", .string(explanation.humanText))])
    }

    func status() -> [(String, JSON)] {
        let display = displayStatus()
        return [("backend", .string(interceptionName))] + display.identity + [
            ("config", .array(config.files.map(JSON.string))),
            ("popups", .int(Int64(config.popupCount))),
            ("rejected", rejected.map(JSON.string) ?? .null),
            ("running", .string(running.name)),
            ("last_good", running.savedAt.map { .object([("file", .string(lastGood.path)), ("saved", .string($0))]) } ?? .null),
            ("unavailable", .array(unavailableSources.map(JSON.string))),
        ] + display.details + [
            ("open", .array(engine.open.map { .object(popupFields($0)) })),
            ("monitors", .int(Int64(control.subscriberCount))),
            ("last_error", lastError.map(JSON.string) ?? .null),
        ]
    }
}

extension Rect {
    /// `[x, y, width, height]`, as `status` and `monitor` write rectangles.
    var json: JSON { .array([x, y, width, height].map { .int(Int64($0)) }) }
}
