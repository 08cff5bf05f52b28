public import ClickawayCore
public import ClickawayJSON

/// What the display adds to an explanation: how it writes windows, and whether another
/// program holds the pointer (then a real click goes to that program, not to clickaway).
public struct ExplanationContext {
    public var describe: (UInt32) -> String
    /// What tied a window to an open popup's family.
    public var tie: (UInt32) -> FamilyTie?
    /// Why a click would go to another program's grab now, nil when none is known.
    public var otherGrab: String?

    public init(describe: @escaping (UInt32) -> String = { "0x" + String($0, radix: 16) },
                tie: @escaping (UInt32) -> FamilyTie? = { _ in nil }, otherGrab: String? = nil) {
        self.describe = describe
        self.tie = tie
        self.otherGrab = otherGrab
    }
}

extension Explanation {
    /// `{"x":X,"y":Y,"hit":{"popup":"P","region":"P.card","member":"0x...","tie":"..."} or null,"path":[...],
    /// "dismiss":[...],"click":"...","grab":"..." or null}`
    public func json(_ context: ExplanationContext = ExplanationContext()) -> JSON {
        var hit: JSON = .null
        if let hitPopup {
            var fields: [(String, JSON)] = [("popup", .string(hitPopup)), ("region", .string(hitRegion ?? hitPopup))]
            if let member {
                fields.append(("member", .string(context.describe(member))))
                if let tie = context.tie(member) { fields.append(("tie", .string(tie.rawValue))) }
            }
            hit = .object(fields)
        }
        return .object([
            ("x", .int(Int64(x))),
            ("y", .int(Int64(y))),
            ("hit", hit),
            ("path", .array(path.map(JSON.string))),
            ("dismiss", .array(dismiss.map(JSON.string))),
            ("click", .string(click.rawValue)),
            ("grab", context.otherGrab.map(JSON.string) ?? .null),
        ])
    }

    /// What a person reads: the hit path, what is dismissed, and what happens to the click.
    public func humanText(_ context: ExplanationContext = ExplanationContext()) -> String {
        var lines = ["press of button \(button) at (\(x), \(y))"]
        if let grab = context.otherGrab {
            lines.append("grab:     \(grab): a click now goes to that program and clickaway decides nothing;")
            lines.append("          what follows is what clickaway decides once the grab ends")
        }
        if path.isEmpty {
            lines.append("hit:      nothing")
        } else {
            lines.append("hit:      " + path.joined(separator: " → "))
        }
        if let member {
            let why = context.tie(member).map { ": \($0.sentence)" } ?? ""
            lines.append("          (through window \(context.describe(member)), which belongs to \"\(hitPopup ?? "?")\"\(why))")
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
        case .inside: return member == nil ? "inside popup \"\(hitPopup ?? "?")\"" : "on a window of popup \"\(hitPopup ?? "?")\""
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
