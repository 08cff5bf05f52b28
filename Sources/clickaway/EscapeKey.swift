import ClickawayCore
import ClickawayX11
import Logging

/// The Escape key on the root window, grabbed (SYNC, every lock combination, checked) only
/// while a popup with `escape = true` is open.
final class EscapeKey {
    private let x: XConnection
    private let logger: Logger
    private let keycodes: [UInt8]
    private let lockCombinations: [ModifierMask]
    private let describe: (ModifierMask) -> String
    private(set) var held: [(keycode: UInt8, modifiers: ModifierMask)] = []
    private(set) var refused: [(modifiers: ModifierMask, error: XErrorInfo)] = []

    init(x: XConnection, grabs: Grabs, logger: Logger) {
        self.x = x
        self.logger = logger
        lockCombinations = grabs.lockCombinations
        describe = grabs.describe
        do {
            keycodes = try x.keycodes(forKeysym: Keysym.escape).sorted()
        } catch {
            keycodes = []
        }
        if keycodes.isEmpty { logger.warning("no key produces Escape in the keyboard map: escape = true has no effect") }
    }

    var isGrabbing: Bool { !held.isEmpty }

    func matches(_ e: KeyEvent) -> Bool { e.window == x.root && keycodes.contains(e.keycode) }

    /// Grabs Escape when `wanted`, lets go otherwise. Returns the sentences for combinations
    /// newly refused.
    func update(wanted: Bool) -> [String] {
        guard wanted != (isGrabbing || !refused.isEmpty) else { return [] }
        release()
        guard wanted else { return [] }
        let combos = keycodes.flatMap { k in lockCombinations.map { (keycode: k, modifiers: $0) } }
        var sentences: [String] = []
        for (combo, error) in x.grabAll(combos, { x.grabKey(keycode: $0.keycode, modifiers: $0.modifiers, window: x.root) }) {
            if let error {
                refused.append((combo.modifiers, error))
                let culprit = Grabs.culprit(error, usual: "another client (often the window manager or a hotkey daemon) already grabs it on the root window")
                let sentence = "cannot grab Escape with \(describe(combo.modifiers)): \(culprit); Escape with that combination will not dismiss popups"
                logger.error("\(sentence)")
                sentences.append(sentence)
            } else {
                held.append(combo)
            }
        }
        x.flush()
        return sentences
    }

    func release() {
        for h in held { x.ungrabKey(keycode: h.keycode, modifiers: h.modifiers, window: x.root) }
        held = []
        refused = []
        x.flush()
    }
}
