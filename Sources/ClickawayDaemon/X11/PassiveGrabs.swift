internal import ClickawayControl
internal import ClickawayCore
public import ClickawayX11
internal import Logging

/// The lock modifiers a click or key may come with and still count: NumLock, CapsLock and
/// ScrollLock, whose bits vary between keyboard maps (CapsLock is always Lock).
///
/// A passive grab matches its modifiers exactly, and AnyModifier fails whole on BadAccess
/// if another client grabs any overlapping combination, so each combination of these bits
/// is grabbed on its own.
public struct LockModifiers: Sendable {
    private let names: [(mask: ModifierMask, name: String)]
    /// No modifier, each lock bit and every union of them, sorted.
    public let combinations: [ModifierMask]

    /// `numLock` and `scrollLock` as the keyboard map has them (empty when no key produces them).
    public init(numLock: ModifierMask, scrollLock: ModifierMask) {
        names = [(numLock, "NumLock"), (.lock, "CapsLock"), (scrollLock, "ScrollLock")].filter { !$0.mask.isEmpty }
        var combos: Set<UInt16> = [0]
        for (mask, _) in names {
            for c in combos { combos.insert(c | mask.rawValue) }
        }
        combinations = combos.sorted().map { ModifierMask(rawValue: $0) }
    }

    /// Read from the server's keyboard and modifier maps.
    public init(x: XConnection) {
        self.init(numLock: (try? x.modifierMask(forKeysym: Keysym.numLock)) ?? [],
                  scrollLock: (try? x.modifierMask(forKeysym: Keysym.scrollLock)) ?? [])
    }

    /// "NumLock+CapsLock", or "no modifiers".
    public func describe(_ modifiers: ModifierMask) -> String {
        let held = names.filter { modifiers.contains($0.mask) }.map(\.name)
        return held.isEmpty ? "no modifiers" : held.joined(separator: "+")
    }
}

/// One set of passive SYNC grabs on the root window: buttons (while a popup is open) or the
/// Escape key (while a popup with `escape = true` is). Each combination is grabbed checked,
/// and one round trip after them says which were refused, collected once it has come
/// (`request`, `collectRefusals`): the loop never waits for it. Those refused are kept apart,
/// and the rest work.
final class PassiveGrabSet {
    /// What a grab takes.
    enum Input: Hashable {
        case button(UInt8)
        /// A keycode.
        case key(UInt8)
    }

    struct Combination: Hashable {
        var input: Input
        var modifiers: ModifierMask
    }

    private let x: XConnection
    let locks: LockModifiers
    private(set) var held: [Combination] = []
    private(set) var refused: [(combination: Combination, error: XErrorInfo)] = []
    /// What was asked for last, granted or not.
    private(set) var wanted: [Input] = []
    /// Grabs sent by `request`, counted as held until the round trip after them says which
    /// were refused.
    private var unchecked: (roundTrip: PendingReply<Void>, grabs: [(combination: Combination, cookie: CheckedCookie)])? {
        didSet { isChecking = unchecked != nil }
    }
    /// Whether `collectRefusals` has grabs to look at. Stored: the loop asks at every pass, a
    /// click's too.
    private(set) var isChecking = false

    init(x: XConnection, locks: LockModifiers) {
        self.x = x
        self.locks = locks
    }

    var isGrabbing: Bool { !held.isEmpty }

    /// Holds exactly the grabs for `inputs` with every lock combination (nothing when it is
    /// empty), without waiting for the server, and not flushed (the loop flushes before it
    /// sleeps, an answer to a press at once): every combination counts as held until
    /// `collectRefusals` finds it refused.
    func request(_ inputs: [Input]) {
        guard inputs != wanted else { return }
        release()
        wanted = inputs
        let grabs = inputs.flatMap { input in locks.combinations.map { Combination(input: input, modifiers: $0) } }
            .map { combo -> (combination: Combination, cookie: CheckedCookie) in
                switch combo.input {
                case .button(let button): (combo, x.grabButton(button: button, modifiers: combo.modifiers, window: x.root, pointerMode: .sync))
                case .key(let keycode): (combo, x.grabKey(keycode: keycode, modifiers: combo.modifiers, window: x.root))
                }
            }
        held = grabs.map(\.combination)
        if !grabs.isEmpty { unchecked = (x.sendRoundTrip(), grabs) }
    }

    /// The combinations `request` sent that the server refused, once it has answered them
    /// (none before). Never waits.
    func collectRefusals() -> [(combination: Combination, error: XErrorInfo)] {
        guard let (roundTrip, grabs) = unchecked else { return [] }
        if case .notYet = x.poll(roundTrip) { return [] }
        unchecked = nil
        // Answered before the round trip: `check` finds each error without waiting.
        var newlyRefused: [(combination: Combination, error: XErrorInfo)] = []
        for (combo, cookie) in grabs {
            guard let error = x.check(cookie) else { continue }
            held.removeAll { $0 == combo }
            refused.append((combo, error))
            newlyRefused.append((combo, error))
        }
        return newlyRefused
    }

    /// Lets go of every grab (a refused one too, which UngrabButton leaves to its holder).
    /// Not flushed, as `request`.
    func release() {
        if let (roundTrip, grabs) = unchecked {
            // What they were refused no longer matters; libxcb keeps each error until asked.
            x.discard(roundTrip)
            for (_, cookie) in grabs { x.discard(cookie) }
            unchecked = nil
        }
        for combo in held {
            switch combo.input {
            case .button(let button): x.ungrabButton(button: button, modifiers: combo.modifiers, window: x.root)
            case .key(let keycode): x.ungrabKey(keycode: keycode, modifiers: combo.modifiers, window: x.root)
            }
        }
        held = []
        refused = []
        wanted = []
    }

    /// Why a grab failed: BadAccess means someone else holds it, in the words of `usual`.
    static func culprit(_ error: XErrorInfo, usual: String) -> String {
        error.name == "BadAccess" ? usual : "the X server answered \(error.name)"
    }
}

/// What a refused button combination means for the clicks that use it.
enum RefusalConsequence: String {
    /// Grab mode: nothing else sees those clicks.
    case notDismissing = "clicks with that combination will not dismiss popups"
    /// `auto` has switched to the shield mode, which needs no grab on the root.
    case shieldTakesThem = "the shield mode takes those clicks instead (backend = \"auto\")"
    /// Shield mode's grabs on the root while the pointer is over the shield.
    case shieldKeepsThem = "the shield keeps taking those clicks; one that goes on is followed by a _NET_ACTIVE_WINDOW request to the window manager for the window under it"
}

extension PassiveGrabSet {
    /// The buttons held, in order.
    var buttons: [Int] {
        wanted.compactMap { if case .button(let b) = $0 { Int(b) } else { nil } }
    }

    /// One sentence for a refused button combination.
    func refusalSentence(_ combo: Combination, _ error: XErrorInfo, _ consequence: RefusalConsequence) -> String {
        guard case .button(let button) = combo.input else { return escapeRefusalSentence(combo, error) }
        return "cannot grab button \(button) with \(locks.describe(combo.modifiers)): "
            + Self.culprit(error, usual: "another client (often the window manager) already grabs that combination on the root window")
            + "; " + consequence.rawValue
    }

    /// One sentence for a refused Escape combination.
    func escapeRefusalSentence(_ combo: Combination, _ error: XErrorInfo) -> String {
        let culprit = Self.culprit(error, usual: "another client (often the window manager or a hotkey daemon) already grabs it on the root window")
        return "cannot grab Escape with \(locks.describe(combo.modifiers)): \(culprit); Escape with that combination will not dismiss popups"
    }

    /// The monitor event for a refused button combination.
    func refusal(_ combo: Combination, _ error: XErrorInfo, _ sentence: String) -> MonitorEvent.GrabRefusal {
        switch combo.input {
        case .button(let button): .button(button, modifiers: locks.describe(combo.modifiers), error: error.name, message: sentence)
        case .key: .key("Escape", message: sentence)
        }
    }
}
