@testable import ClickawayDaemon
import ClickawaySystem
import Glibc
import Logging
import Testing

/// The deadline the loop reads for the children running: when a command is slow enough to
/// report, when a helper is to be killed; kept as they start and as they are dealt with.
@Suite struct DismissCommandsTests {
    @Test func theSlowCheckFollowsTheCommandsAndHelpersRunning() throws {
        let commands = DismissCommands(logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        defer {
            for pid in commands.childPids {
                kill(-pid, SIGKILL)
                _ = ProcessExit.reap(pid, blocking: true)
            }
        }
        #expect(commands.slowCheck.deadline == nil)
        try commands.runHelper(["sleep", "30"], killAfterMs: 800, now: 1000) { _, _ in }
        #expect(commands.slowCheck.deadline == Deadline(milliseconds: 1800))
        #expect(commands.run(["sleep", "30"], environment: [:], popup: "p", window: nil, now: 2000))
        #expect(commands.slowCheck.deadline == Deadline(milliseconds: 1800))
        // The helper killed: the command's report is next, and then nothing.
        commands.reportSlow(now: 1800)
        #expect(commands.slowCheck.deadline == Deadline(milliseconds: 2000 + DismissCommands.slowAfterMs))
        commands.reportSlow(now: 2000 + DismissCommands.slowAfterMs)
        #expect(commands.slowCheck.deadline == nil)
        #expect(commands.childPids.count == 2)
    }
}
