import ClickawayConfig
import ClickawayControl
import ClickawayCore
@testable import ClickawayDaemon
import ClickawaySystem
import Foundation
import Logging
import ProcessSupport
import SystemPackage

/// A `Daemon` on a `ScriptedDisplay`, stepped by the test instead of running its loop: a
/// configuration file in a directory of its own, the real control socket there, the real
/// reloader. Everything but the display is the daemon users run.
final class DaemonUnderTest {
    let display: ScriptedDisplay
    let daemon: Daemon
    let configFile: String
    let directory: String
    private let loop: PollLoop
    private let control: ControlServer
    /// Ends every wait here within 20 ms (`waitBounded()`): `step()` returns to look again.
    private let bound = LoopTimer()

    init(_ toml: String) throws {
        directory = NSTemporaryDirectory() + "clickaway-scripted-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        configFile = directory + "/config.toml"
        try TestFiles.write(toml, to: configFile)
        let config = try ConfigLoader.load(file: configFile, environment: [:])
        loop = try PollLoop()
        loop.schedule(bound) { _ in }
        control = try ControlServer(directory: directory + "/run", loop: loop)
        display = ScriptedDisplay(model: config.model)
        daemon = Daemon(display: display, config: config, configFile: configFile, backend: nil, loop: loop, control: control,
                        notifier: nil, logger: Logger(label: "scripted") { _ in SwiftLogNoOpLogHandler() })
        // Settled after every change, however long a settle takes on the machine running the
        // tests: a test that wants settles paced sets its own pace.
        daemon.pacing = SettlePacing(immediateMicroseconds: .max)
        daemon.start()
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// Lets the daemon handle what the display queued, with no wait.
    func step() { daemon.step() }

    /// Steps the daemon, waiting for its sockets, until `done` holds or `timeout` passes.
    func step(until what: String, timeout: Duration = .seconds(5), _ done: () throws -> Bool) throws {
        let clock = ContinuousClock()
        let end = clock.now + timeout
        while true {
            daemon.step()
            if try done() { return }
            guard clock.now < end else { throw HarnessError("within \(timeout): \(what) did not happen") }
            waitBounded()
        }
    }

    /// The earliest of the daemon's deadlines, as the loop reads it before its next wait.
    var nextDeadline: Deadline? {
        bound.deadline = nil
        return loop.nextDeadline
    }

    private func waitBounded() {
        bound.deadline = .inMilliseconds(20)
        loop.wait()
    }

    /// A control connection, as clickawayctl makes one.
    func connect() throws -> ControlClient { try ControlClient(path: control.path) }

    /// Waits on the loop, without stepping, until the reload being loaded has come back: its
    /// outcome is queued for the next `step()`, which has not taken it yet.
    func waitForReloadOutcome(timeout: Duration = .seconds(5)) throws {
        try step(until: "the reload starting") { daemon.isReloading }
        let clock = ContinuousClock()
        let end = clock.now + timeout
        while daemon.isReloading {
            guard clock.now < end else { throw HarnessError("within \(timeout): the reload's outcome did not come back") }
            waitBounded()
        }
    }

    /// Steps until the daemon has taken the outcome of the reload it is loading (or is about
    /// to start, for a request sent), and no further: what the reload swapped in is seen before
    /// anything built after it comes back (that takes another wait of the loop).
    func stepUntilReloaded() throws {
        try step(until: "the reload starting") { daemon.isReloading }
        try step(until: "the reload's outcome taken") { !daemon.isReloading }
    }

    /// Sends each line on a connection of its own so that one pass of the daemon answers them
    /// all, in this order: a test makes requests happen together without timing them. Each
    /// connection is answered once first (a `sync`, so the daemon has accepted it), then a pass
    /// goes by (a connection just answered keeps its place in line until a pass finds it has
    /// nothing more); then the lines go out, the next wait reads them all, and the daemon
    /// gives turns in the order it read them: the order the connections were made.
    func sendInOnePass(_ lines: [String]) throws -> [ControlClient] {
        let clients = try lines.map { _ in try connect() }
        for client in clients {
            try client.send(#"{"request":"sync"}"#)
            _ = try client.reply(from: self, to: "sync")
        }
        waitBounded()
        daemon.step()
        for (client, line) in zip(clients, lines) { try client.send(line) }
        return clients
    }

    /// One request and its one reply line.
    func request(_ line: String) throws -> String {
        let client = try connect()
        try client.send(line)
        return try client.reply(from: self, to: line)
    }
}

/// One connection to the daemon's control socket.
final class ControlClient {
    let fd: FileDescriptor
    private var buffer: [UInt8] = []

    init(path: String) throws {
        fd = try FileDescriptor.connectedUnixSocket(try UnixSocketAddress(path: path))
        try fd.setNonBlocking()
    }

    private var open = true

    /// Closes the connection (once: tests run side by side, and a descriptor closed twice may
    /// be another test's by then).
    func close() {
        guard open else { return }
        open = false
        try? fd.close()
    }

    deinit { close() }

    func send(_ line: String) throws { _ = try fd.writeAll((line + "\n").utf8) }

    /// The next line, if one came.
    func line() -> String? {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while let n = try? chunk.withUnsafeMutableBytes({ try fd.read(into: $0) }), n > 0 { buffer += chunk[..<n] }
        guard let end = buffer.firstIndex(of: 10) else { return nil }
        defer { buffer.removeSubrange(...end) }
        return String(decoding: buffer[..<end], as: UTF8.self)
    }

    /// The next line, stepping `daemon` until it comes.
    func reply(from daemon: DaemonUnderTest, to what: String) throws -> String {
        var got: String?
        try daemon.step(until: "a reply to \(what)") {
            got = line()
            return got != nil
        }
        return got!
    }
}
