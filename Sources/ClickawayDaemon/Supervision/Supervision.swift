internal import ClickawaySystem

/// What systemd hears from the daemon (Type=notify): READY=1 and RELOADING=1 with a status
/// line, a new STATUS= whenever the line changes, STOPPING=1, and the watchdog's pings
/// (half of WatchdogSec, from the loop's deadlines). Nothing at all outside systemd.
final class Supervision {
    private let notifier: SystemdNotifier?
    private let nextPing = LoopTimer()
    private var lastStatus = ""

    init(notifier: SystemdNotifier?) {
        self.notifier = notifier
    }

    /// Starts the watchdog's pings.
    func register(with loop: PollLoop) {
        guard let interval = notifier?.watchdogIntervalMs else { return }
        nextPing.deadline = .inMilliseconds(interval)
        loop.schedule(nextPing) { [unowned self] now in
            notifier?.send("WATCHDOG=1")
            nextPing.deadline = Deadline(milliseconds: now + interval)
        }
    }

    func ready(_ status: String) {
        lastStatus = status
        notifier?.send("READY=1\nSTATUS=\(status)")
    }

    func reloading(_ status: String) { notifier?.sendReloading(status: status) }

    /// The status line, when it changed.
    func status(_ line: String) {
        guard line != lastStatus else { return }
        lastStatus = line
        notifier?.send("STATUS=\(line)")
    }

    func stopping(_ status: String? = nil) {
        notifier?.send("STOPPING=1" + (status.map { "\nSTATUS=\($0)" } ?? ""))
    }
}
