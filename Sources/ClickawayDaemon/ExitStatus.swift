/// What `clickaway`'s exit status means. systemd's unit restarts on a failure
/// (`Restart=on-failure`) except on those a restart cannot fix (`RestartPreventExitStatus=`:
/// `noRestart`), and clickaway(1) and docs/systemd.md list them: `ExitStatusTests` holds all three
/// to these values.
public enum DaemonExitStatus: Int32, CaseIterable, Sendable {
    /// Stopped by SIGTERM or SIGINT, everything released.
    case stopped = 0
    /// Any other failure: the display went away while it ran, the control socket could not
    /// be made, ... A restart may help.
    case failure = 1
    /// sysexits.h's EX_USAGE: a wrong command line, or `--config FILE` names a file that cannot
    /// be read.
    case usage = 64
    /// sysexits.h's EX_UNAVAILABLE: no display to use: neither DISPLAY nor WAYLAND_DISPLAY (nor
    /// `--display`), the server refuses the connection, or it lacks what clickaway needs
    /// (layer-shell on Wayland).
    case noDisplay = 69
    /// sysexits.h's EX_CANTCREAT: another clickaway is already running for this user (its
    /// control socket answers).
    case alreadyRunning = 73

    /// The statuses a restart cannot fix.
    public static let noRestart: [DaemonExitStatus] = [.usage, .noDisplay, .alreadyRunning]

    /// One line each, for clickaway(1)'s EXIT STATUS and docs/systemd.md.
    public var meaning: String {
        switch self {
        case .stopped: "Stopped by SIGTERM or SIGINT."
        case .failure: "Any other failure, such as losing the display while running; systemd restarts it."
        case .usage: "A wrong command line, or a --config file that does not exist or cannot be read."
        case .noDisplay: "No display to use: neither DISPLAY nor WAYLAND_DISPLAY is set, the server cannot be reached, or it lacks what clickaway needs (layer-shell on Wayland, clickaway's extension on GNOME)."
        case .alreadyRunning: "Another clickaway is already running for this user (its control socket answers)."
        }
    }
}
