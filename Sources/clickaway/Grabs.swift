import ClickawayCore
import ClickawayX11
import Logging

/// The passive SYNC button grabs on the root window, held only while a popup is open.
///
/// AnyModifier would fail whole on BadAccess if another client grabs any overlapping
/// combination, so each lock combination is grabbed on its own, checked, and the refused
/// ones are reported one by one while the others keep working.
final class Grabs {
    struct Combination: Hashable {
        var button: UInt8
        var modifiers: ModifierMask
    }

    private let x: XConnection
    private let logger: Logger
    /// The lock modifiers and their unions: with these held, a click still counts.
    let lockCombinations: [ModifierMask]
    private let lockNames: [(ModifierMask, String)]
    private(set) var held: [Combination] = []
    private(set) var refused: [(Combination, XErrorInfo)] = []
    private(set) var buttons = ButtonSet(bits: 0)

    init(x: XConnection, logger: Logger) {
        self.x = x
        self.logger = logger
        let numLock = (try? x.modifierMask(forKeysym: Keysym.numLock)) ?? []
        let scrollLock = (try? x.modifierMask(forKeysym: Keysym.scrollLock)) ?? []
        var names: [(ModifierMask, String)] = [(numLock, "NumLock"), (.lock, "CapsLock"), (scrollLock, "ScrollLock")]
        names.removeAll { $0.0.isEmpty }
        lockNames = names
        var combos: Set<UInt16> = [0]
        for (mask, _) in names {
            for c in combos { combos.insert(c | mask.rawValue) }
        }
        lockCombinations = combos.sorted().map { ModifierMask(rawValue: $0) }
    }

    var isGrabbing: Bool { !held.isEmpty }

    func describe(_ modifiers: ModifierMask) -> String {
        let names = lockNames.filter { modifiers.contains($0.0) }.map(\.1)
        return names.isEmpty ? "no modifiers" : names.joined(separator: "+")
    }

    /// Holds exactly the grabs for `wanted` (nothing when it is empty).
    /// Returns the combinations newly refused, for the caller to report: what a refusal
    /// costs depends on the mode (`refusalSentence`).
    @discardableResult
    func update(to wanted: ButtonSet) -> [(Combination, XErrorInfo)] {
        guard wanted != buttons else { return [] }
        release()
        buttons = wanted
        let combos = wanted.buttons.flatMap { b in lockCombinations.map { Combination(button: UInt8(b), modifiers: $0) } }
        var newlyRefused: [(Combination, XErrorInfo)] = []
        for (combo, error) in x.grabAll(combos, { x.grabButton(button: $0.button, modifiers: $0.modifiers, window: x.root, pointerMode: .sync) }) {
            if let error {
                refused.append((combo, error))
                newlyRefused.append((combo, error))
            } else {
                held.append(combo)
            }
        }
        x.flush()
        if !held.isEmpty {
            logger.debug("grabbing buttons on the root window", metadata: [
                "buttons": "\(wanted.buttons)", "combinations": "\(held.count)",
            ])
        }
        return newlyRefused
    }

    /// What a refused combination means for the clicks that use it.
    enum Consequence: String {
        /// Grab mode: nothing else sees those clicks.
        case notDismissing = "clicks with that combination will not dismiss popups"
        /// `auto` has switched to the shield mode, which needs no grab on the root.
        case shieldTakesThem = "the shield mode takes those clicks instead (backend = \"auto\")"
        /// Shield mode's grabs on the root while the pointer is over the shield.
        case shieldKeepsThem = "the shield keeps taking those clicks; one that goes on is followed by a _NET_ACTIVE_WINDOW request to the window manager for the window under it"
    }

    func refusalSentence(_ combo: Combination, _ error: XErrorInfo, _ consequence: Consequence) -> String {
        "cannot grab button \(combo.button) with \(describe(combo.modifiers)): "
            + Self.culprit(error, usual: "another client (often the window manager) already grabs that combination on the root window")
            + "; " + consequence.rawValue
    }

    /// Why a grab failed: BadAccess means someone else holds it, in the words of `usual`.
    static func culprit(_ error: XErrorInfo, usual: String) -> String {
        error.name == "BadAccess" ? usual : "the X server answered \(error.name)"
    }

    /// Lets go of every grab.
    func release() {
        for c in held { x.ungrabButton(button: c.button, modifiers: c.modifiers, window: x.root) }
        held = []
        refused = []
        buttons = ButtonSet(bits: 0)
        x.flush()
    }
}

extension XConnection {
    /// Sends every grab, then collects the answers: one round trip for all of them.
    /// Pairs each combination with its error, nil when it was granted.
    func grabAll<C>(_ combos: [C], _ grab: (C) -> CheckedCookie) -> [(C, XErrorInfo?)] {
        let cookies = combos.map(grab)
        return zip(combos, cookies).map { ($0, check($1)) }
    }
}
