import ClickawaySystem
import Foundation
import Glibc
import ProcessSupport
import Testing
import XTestHarness

/// The daemon's log when systemd connects its stderr to the journal ($JOURNAL_STREAM names
/// stderr's device and inode): priorities, no timestamps, one entry per record.
@Suite("The log in the journal's form", .serialized)
struct JournalLogTests {
    /// Runs the daemon with $JOURNAL_STREAM set to its stderr's DEV:INO, as systemd does.
    static let asTheJournal = ["/bin/sh", "-c", "export JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) && exec \"$@\"", "sh"]
    static let timestamp = #"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"#

    /// The broken configuration's diagnostic (file:line:column, the line, the caret) and what
    /// the daemon does about it.
    static func expectOneErrorEntry(_ message: String, _ f: DaemonFixture) {
        #expect(message.contains("\(f.configPath):3:12: error:"), "\(message)")
        #expect(message.contains("did you mean \"class\"?"), "\(message)")
        #expect(message.contains("^"), "\(message)")
        #expect(message.contains("running with no popups"), "\(message)")
    }

    @Test func onTheStreamEachRecordIsOnePrefixedLine() throws {
        let f = try DaemonFixture(config: BrokenConfigTests.typo)
        // No native socket: every record goes to the stream.
        try f.startDaemon(extraEnvironment: ["CLICKAWAY_JOURNAL_SOCKET": ""], launcher: Self.asTheJournal)
        _ = try f.status()
        #expect(f.daemon?.signalAndWait(SIGTERM) == 0)
        let lines = f.log.split(separator: "\n")
        #expect(!lines.isEmpty)
        for line in lines {
            #expect(line.range(of: #"^<[3467]>"#, options: .regularExpression) != nil, "no priority: \(line)")
            #expect(line.range(of: Self.timestamp, options: .regularExpression) == nil, "a timestamp: \(line)")
        }
        let error = lines.first { $0.hasPrefix("<3>") && $0.contains("did you mean") }
        Self.expectOneErrorEntry(String(error ?? ""), f)
        #expect(error?.contains(" ⏎ ") == true, "\(f.log)")
        #expect(lines.contains { $0.hasPrefix("<6>running") }, "\(f.log)")
        #expect(lines.contains { $0.hasPrefix("<7>") }, "--log-level debug shows debug records: \(f.log)")
        #expect(!f.log.contains("notice") && !f.log.contains("critical"), "\(f.log)")
    }

    @Test func onTheNativeSocketAMultiLineDiagnosticIsOneEntry() throws {
        let journal = try NotifySocket(abstract: false)
        let f = try DaemonFixture(config: BrokenConfigTests.typo)
        try f.startDaemon(extraEnvironment: ["CLICKAWAY_JOURNAL_SOCKET": journal.environmentValue], launcher: Self.asTheJournal)
        _ = try f.status()
        var entries: [[String: String]] = []
        while let datagram = try journal.next(within: .milliseconds(500)) {
            #expect(datagram.senderPID == f.daemon?.pid)
            entries.append(try journalFields(datagram.bytes))
        }
        #expect(entries.allSatisfy { $0["SYSLOG_IDENTIFIER"] == "clickaway" && $0["PRIORITY"] != nil && $0["MESSAGE"] != nil })
        let message = entries.first { $0["PRIORITY"] == "3" && $0["MESSAGE"]?.contains("did you mean") == true }?["MESSAGE"] ?? ""
        Self.expectOneErrorEntry(message, f)
        #expect(message.split(separator: "\n").count >= 3, "the diagnostic's lines are kept: \(message)")
        let running = entries.first { $0["PRIORITY"] == "6" && $0["MESSAGE"]?.hasPrefix("running") == true }
        #expect(running != nil, "\(entries)")
        // The record's metadata, as fields `journalctl CLICKAWAY_BACKEND=x11-grab` finds.
        #expect(running?["CLICKAWAY_POPUPS"] == "0" && running?["CLICKAWAY_BACKEND"] != nil
                && running?["CLICKAWAY_CONTROL"]?.hasSuffix("ctl.sock") == true, "\(running ?? [:])")
        #expect(f.log.isEmpty, "nothing on stderr while the socket takes the records: \(f.log)")
    }

    /// A start that fails is an error entry too, so `journalctl -p err` finds it.
    @Test func aFailedStartIsAnError() throws {
        let f = try DaemonFixture(config: BrokenConfigTests.pop)
        try f.startDaemon()
        let binary = DaemonFixture.buildDirectory.appendingPathComponent("clickaway").path
        var environment = f.environment
        environment["CLICKAWAY_JOURNAL_SOCKET"] = ""
        let run = try ProgramRun.run(Self.asTheJournal + [binary, "--config", f.configPath] + f.displayArguments,
                                     environment: environment, limit: .seconds(30))
        #expect(run.status == 73, "\(run.output)")
        #expect(run.stderr.hasPrefix("<3>clickaway: another clickaway is already running"), "\(run.stderr)")
        #expect(run.stderr.filter { $0 == "\n" }.count == 1, "\(run.stderr)")
    }

}
