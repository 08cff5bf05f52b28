import ClickawaySystem
import Glibc
import Testing

/// Wait statuses as waitpid(2) stores them, decoded without the C macros.
@Suite struct ProcessExitTests {
    @Test func exitCodesAndSignalsDecode() {
        #expect(ProcessExit(waitStatus: 0) == .exited(code: 0))
        #expect(ProcessExit(waitStatus: 1 << 8) == .exited(code: 1))
        #expect(ProcessExit(waitStatus: 255 << 8) == .exited(code: 255))
        #expect(ProcessExit(waitStatus: SIGKILL) == .killed(signal: SIGKILL))
        // A core dump sets 0x80 beside the signal.
        #expect(ProcessExit(waitStatus: 0x80 | SIGSEGV) == .killed(signal: SIGSEGV))
        #expect(ProcessExit.exited(code: 0).succeeded)
        #expect(!ProcessExit.exited(code: 3).succeeded)
        #expect(!ProcessExit.killed(signal: SIGTERM).succeeded)
        #expect(ProcessExit.killed(signal: SIGTERM).shellStatus == 128 + SIGTERM)
        #expect(ProcessExit.exited(code: 7).shellStatus == 7)
    }

    @Test func realChildrenAreDecodedAsTheShellSeesThem() throws {
        for (script, expected) in [("exit 0", ProcessExit.exited(code: 0)), ("exit 42", .exited(code: 42)),
                                   ("kill -TERM $$", .killed(signal: SIGTERM))] {
            let pid = try Spawn.start(["sh", "-c", script], Spawn.Options(environment: ["PATH": "/usr/bin:/bin"]))
            #expect(ProcessExit.reap(pid, blocking: true) == expected, "\(script)")
        }
    }
}
