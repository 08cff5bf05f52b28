import ClickawaySystem
import Glibc
import SystemPackage
import Testing

@Suite struct SpawnTests {
    /// Runs `script` with its stdout on a pipe; returns what it printed.
    func output(_ script: String, environment: [String: String] = ["PATH": "/usr/bin:/bin"]) throws -> String {
        let (readEnd, writeEnd) = try FileDescriptor.pipe(options: .closeOnExec)
        defer { try? readEnd.close() }
        let pid: pid_t
        do {
            defer { try? writeEnd.close() }
            pid = try Spawn.start(["sh", "-c", script], Spawn.Options(environment: environment, stdout: .descriptor(writeEnd)))
        }
        var bytes: [UInt8] = []
        while let n = try readEnd.readAvailable(appendingTo: &bytes), n > 0 {}
        #expect(ProcessExit.reap(pid, blocking: true) == .exited(code: 0))
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func theChildInheritsNoDescriptorButTheStandardOnes() throws {
        // Opened without close-on-exec, as Foundation opens files.
        let leaked = open("/dev/null", O_RDONLY)
        defer { close(leaked) }
        #expect(leaked > 2)
        let listing = try output("ls /proc/$$/fd")
        let descriptors = listing.split(separator: "\n").compactMap { Int32($0) }.sorted()
        #expect(descriptors == [0, 1, 2], "the child had \(listing)")
    }

    @Test func theEnvironmentIsExactlyTheOneGiven() throws {
        let printed = try output("env", environment: ["PATH": "/usr/bin:/bin", "CLICKAWAY_TEST": "a b=c"])
        #expect(printed.split(separator: "\n").filter { !$0.hasPrefix("PWD=") && !$0.hasPrefix("SHLVL=") && $0 != "_=/usr/bin/env" }.sorted()
                == ["CLICKAWAY_TEST=a b=c", "PATH=/usr/bin:/bin"])
    }

    @Test func signalsStartAtTheirDefaultsAndUnblocked() throws {
        var blocked = sigset_t(), previous = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        let oldHandler = signal(SIGHUP, SIG_IGN)
        defer {
            pthread_sigmask(SIG_SETMASK, &previous, nil)
            signal(SIGHUP, oldHandler)
        }
        let status = try output("exec grep -E '^(SigBlk|SigIgn)' /proc/self/status")
        #expect(status.contains("SigBlk:\t0000000000000000"), "\(status)")
        #expect(!status.contains("SigIgn:\t0000000000000001"), "\(status)")
    }

    @Test func aMissingProgramIsAFailureNamingIt() {
        #expect(throws: Spawn.Failure.self) {
            try Spawn.start(["clickaway-no-such-program"], Spawn.Options(environment: ["PATH": "/usr/bin:/bin"]))
        }
    }

    @Test func anOwnProcessGroupIsTheChildsOwn() throws {
        let (readEnd, writeEnd) = try FileDescriptor.pipe(options: .closeOnExec)
        defer { try? readEnd.close() }
        let pid: pid_t
        do {
            defer { try? writeEnd.close() }
            pid = try Spawn.start(["sh", "-c", "ps -o pgid= -p $$"],
                                  Spawn.Options(environment: ["PATH": "/usr/bin:/bin"], stdout: .descriptor(writeEnd), ownProcessGroup: true))
        }
        var bytes: [UInt8] = []
        while let n = try readEnd.readAvailable(appendingTo: &bytes), n > 0 {}
        _ = ProcessExit.reap(pid, blocking: true)
        let group = String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
        #expect(group == ["\(pid)"])
    }
}
