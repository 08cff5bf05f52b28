internal import ClickawayControl
internal import ClickawayCore
internal import ClickawaySystem

/// Where windows come from on Wayland, which tells no client about another's: the
/// compositor's own channel, sway's IPC (`SwayWindows`) or a KWin script
/// (`KWinWindows`). `WaylandDisplay` asks one of them, whichever the session has.
protocol CompositorWindows: WindowSource {
    /// What people call it: "sway", "KWin".
    var compositorName: String { get }
    /// Why it stopped working, once it has.
    var failure: String? { get }
    /// Windows that play a role now.
    var windowCount: Int { get }
    /// Whether windows may move without a word (sway 1.7): then the windows are read again
    /// before a press is decided and now and then while a popup is open.
    var movesSilently: Bool { get }

    /// Watches its connections on the loop.
    func register(with loop: PollLoop)
    /// Whether the windows the engine sees changed since the last call.
    func takeChange() -> Bool
    /// Whether the compositor refused to close a window, not told yet.
    var hasCloseRefusals: Bool { get }
    /// A window the compositor refused to close, oldest first.
    func takeCloseRefusal() -> UInt32?
    /// Asks the compositor to close the window as its close button would; for `kill`,
    /// ends its process.
    func close(_ window: UInt32, kill: Bool)
    /// Asks for the windows as they are now, without waiting: `hasAnswered` says when
    /// they are in.
    func requestFreshTree() -> Int
    func hasAnswered(_ ticket: Int) -> Bool
    /// Asks for the windows again when it is the kind that must be asked (`movesSilently`).
    func requestTree()
    /// The window under a point, as last read, for `pick`; nil on none.
    func view(at x: Int32, _ y: Int32) -> PickReply?
    /// A new configuration: the windows are matched again (and, with `readingTree`, read again).
    func replaceModel(_ model: ClickModel, readingTree: Bool)
    /// What `status` says of it.
    var status: CompositorWindowsStatus { get }
    /// The daemon stops: leaves nothing of its own in the compositor.
    func stop()
}
