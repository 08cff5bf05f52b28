public import ClickawayCore
public import ClickawayJSON

extension Explanation {
    /// `{"x":X,"y":Y,"hit":{"popup":"P","region":"P.card"} or null,"path":[...],"dismiss":[...],"click":"..."}`
    public var json: JSON {
        .object([
            ("x", .int(Int64(x))),
            ("y", .int(Int64(y))),
            ("hit", hitPopup.map { .object([("popup", .string($0)), ("region", .string(hitRegion ?? $0))]) } ?? .null),
            ("path", .array(path.map(JSON.string))),
            ("dismiss", .array(dismiss.map(JSON.string))),
            ("click", .string(click.rawValue)),
        ])
    }

    /// What a person reads: the hit path, what is dismissed, and what happens to the click.
    public var humanText: String {
        var lines = ["press of button \(button) at (\(x), \(y))"]
        if path.isEmpty {
            lines.append("hit:      nothing")
        } else {
            lines.append("hit:      " + path.joined(separator: " → "))
        }
        if let from = redirectedFrom { lines.append("          (redirected from \(from))") }
        lines.append("dismiss:  " + (dismiss.isEmpty ? "nothing" : dismiss.joined(separator: ", ")))
        if !awaitingRelease.isEmpty {
            lines.append("pending:  " + awaitingRelease.joined(separator: ", ") + " (trigger = \"click\": closed if the release is outside too)")
        }
        lines.append("click:    \(click.rawValue) (\(because))")
        return lines.joined(separator: "\n")
    }

    private var because: String {
        switch reason {
        case .inside: return "inside popup \"\(hitPopup ?? "?")\""
        case .anchor: return "on an anchor of an open popup"
        case .exclusion: return "on an exclusion: nothing is dismissed"
        case .outside:
            if dismiss.isEmpty && awaitingRelease.isEmpty { return "outside every popup, but none may be dismissed by it now" }
            switch click {
            case .swallow: return "outside every popup: the click reaches nothing"
            case .replay: return "outside every popup: the click goes on to what is under it"
            case .pass: return "outside every popup"
            }
        case .clickInProgress: return "another button of this click is held"
        case .duplicate: return "the same press was decided already"
        }
    }
}
