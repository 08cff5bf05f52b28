@testable import ClickawayDaemon
import Testing

/// What the daemon hands notify-send: the text is data after `--`, markup escaped, cut short.
@Suite struct DesktopNotificationsTests {
    @Test func theDiagnosticIsAnArgumentAfterTheOptions() {
        let argv = DesktopNotifications.arguments(diagnostics: "--help <b>&</b>\n$(reboot)", running: .files)
        #expect(argv.first == "notify-send")
        let end = argv.firstIndex(of: "--")
        #expect(end == argv.count - 3, "\(argv)")
        #expect(argv.last == "The previous configuration keeps running.\n--help &lt;b&gt;&amp;&lt;/b&gt;\n$(reboot)")
        #expect(argv.dropLast(2).allSatisfy { $0 == "--" || $0.hasPrefix("--") || $0 == "notify-send" }, "\(argv)")
    }

    @Test func theBodySaysWhatRunsAndCutsLongDiagnostics() {
        let long = (1...40).map { "line \($0)" }.joined(separator: "\n") + "\n"
        let body = DesktopNotifications.body(diagnostics: long, running: .none)
        let lines = body.split(separator: "\n")
        #expect(lines.first == "Running with no popups until the errors are fixed.")
        #expect(lines.count == DesktopNotifications.bodyLines + 2, "\(body)")
        #expect(lines.last == "… 28 more lines: clickawayctl status shows them all.")
        #expect(DesktopNotifications.body(diagnostics: "x", running: .lastGood(saved: "t")).hasPrefix("Running the last configuration"))
    }

    @Test func aSessionBusIsNamedByTheAddressOrTheRuntimeDirectory() {
        #expect(DesktopNotifications.hasSessionBus(["DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"]))
        #expect(!DesktopNotifications.hasSessionBus(["DBUS_SESSION_BUS_ADDRESS": ""]))
        #expect(!DesktopNotifications.hasSessionBus(["XDG_RUNTIME_DIR": "/nonexistent"]))
        #expect(!DesktopNotifications.hasSessionBus([:]))
    }
}
