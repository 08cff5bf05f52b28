internal import ClickawayCore

/// What a display cannot do that a configuration may ask for, each with why (nil where the
/// display can): properties of the display (`DisplayState.abilities`), never found by
/// asking which display it is.
public struct DisplayAbilities: Sendable {
    /// Why no windows are found here (Wayland without sway's IPC): window popups never match,
    /// and `open --window`, `open --pid` and `pick` are refused with it.
    public var windowsUnavailable: String?
    /// Why nothing matches by app_id here (X11).
    public var appIdUnavailable: String?
    /// Why the Escape key cannot be taken here (Wayland).
    public var escapeUnavailable: String?
    /// Why a window cannot be unmapped here (Wayland).
    public var unmapUnavailable: String?
    /// Why clicks cannot be replayed here (a compositor that offers no injector).
    public var replayUnavailable: String?
    /// What a process's window must carry to be found by `open --pid`, when more than being
    /// a window (X11: `_NET_WM_PID`); said when none came in time.
    public var processWindowRequirement: String?

    public init(windowsUnavailable: String? = nil, appIdUnavailable: String? = nil, escapeUnavailable: String? = nil,
                unmapUnavailable: String? = nil, replayUnavailable: String? = nil, processWindowRequirement: String? = nil) {
        self.windowsUnavailable = windowsUnavailable
        self.appIdUnavailable = appIdUnavailable
        self.escapeUnavailable = escapeUnavailable
        self.unmapUnavailable = unmapUnavailable
        self.replayUnavailable = replayUnavailable
        self.processWindowRequirement = processWindowRequirement
    }

    /// The popups, anchors and exclusions of `model` that ask for what this display cannot
    /// do, one sentence each: logged at start and at each reload, and shown by `status`.
    func unavailableSources(in model: ClickModel) -> [String] {
        var sentences: [String] = []
        if let why = appIdUnavailable { sentences += model.appIdMatchUsers.map { "\($0) matches by app_id, \(why)" } }
        if let why = windowsUnavailable {
            sentences += model.windowMatchUsers { _ in true }.map {
                "\($0) matches windows, but \(why) (a rect popup with `clickawayctl open` works everywhere)"
            }
        }
        for p in model.popups {
            if p.escape, let why = escapeUnavailable {
                sentences.append("popup \"\(p.name)\" has escape = true, but \(why): "
                                 + "bind Escape to `clickawayctl dismiss \(p.name)` instead (docs/wayland.md)")
            }
            if case .window = p.source, p.dismiss == .unmap, let why = unmapUnavailable {
                sentences.append("popup \"\(p.name)\" has dismiss = \"unmap\", but \(why): its window is closed instead (as with \"close\")")
            }
            if p.outsideClick == .replay, let why = replayUnavailable {
                sentences.append("popup \"\(p.name)\" has outside_click = \"replay\", but \(why): its outside clicks are swallowed")
            }
        }
        return sentences
    }
}
