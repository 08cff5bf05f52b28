import ClickawayControl
import ClickawayCore
import Foundation
import XTestHarness

/// An output a test's sway knows by name: where it goes and its size. The first one exists
/// from the start (HEADLESS-1); the others appear with `HeadlessSway.createOutput()`.
public struct HeadlessOutput: Sendable {
    public var name: String
    public var rect: Rect

    public init(name: String, rect: Rect) {
        self.name = name
        self.rect = rect
    }
}

/// A private sway for one test: the headless backend with the pixman renderer, no
/// Xwayland, no input devices, in a runtime directory of its own, gone after `stop()` or
/// deinit.
///
/// sway refuses to run as root, so under root it runs as `nobody` (setpriv), in a
/// directory owned by nobody, mode 0700. The test process, still root, connects to the
/// sockets in it by absolute path: root passes the directory's and the sockets'
/// permission checks. Under any other user sway runs as that user.
public final class HeadlessSway {
    public let runtimeDirectory: String
    /// The Wayland socket's absolute path, for `WaylandClient(display:)`.
    public let waylandSocket: String
    /// sway's IPC socket (what `SWAYSOCK` would name).
    public let ipcSocket: String
    /// The outputs as configured.
    public let outputs: [HeadlessOutput]
    private let process: ChildProcess

    public static let defaultOutputs = [
        HeadlessOutput(name: "HEADLESS-1", rect: Rect(x: 0, y: 0, width: 1280, height: 720)),
        HeadlessOutput(name: "HEADLESS-2", rect: Rect(x: 1280, y: 0, width: 800, height: 600)),
    ]

    public init(outputs: [HeadlessOutput] = defaultOutputs, timeout: Duration = .seconds(10)) throws {
        self.outputs = outputs
        var template = Array("/tmp/clickaway-sway-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw HarnessError("cannot create a runtime directory for sway: \(String(cString: strerror(errno)))")
        }
        runtimeDirectory = String(cString: made)
        ipcSocket = runtimeDirectory + "/ipc.sock"
        let config = runtimeDirectory + "/config"

        var lines = outputs.map { o in
            "output \(o.name) resolution \(o.rect.width)x\(o.rect.height) position \(o.rect.x) \(o.rect.y)"
        }
        lines += ["default_border none", "xwayland disable"]
        let user = try Self.unprivilegedUser()
        do {
            try (lines.joined(separator: "\n") + "\n").write(toFile: config, atomically: false, encoding: .utf8)
            if let user {
                guard chown(runtimeDirectory, user.uid, user.gid) == 0, chown(config, user.uid, user.gid) == 0 else {
                    throw HarnessError("cannot give \(runtimeDirectory) to \(user.name): \(String(cString: strerror(errno)))")
                }
            }
            let environment = [
                "HOME=\(runtimeDirectory)", "PATH=/usr/bin:/bin", "XDG_RUNTIME_DIR=\(runtimeDirectory)",
                "SWAYSOCK=\(ipcSocket)", "WLR_BACKENDS=headless", "WLR_RENDERER=pixman", "WLR_LIBINPUT_NO_DEVICES=1",
            ]
            let sway = ["env", "-i"] + environment + ["sway", "-c", config]
            let command = user.map { ["setpriv", "--reuid=\($0.uid)", "--regid=\($0.gid)", "--init-groups"] + sway } ?? sway
            process = try ChildProcess(command, environment: ["PATH": "/usr/bin:/bin"])
        } catch {
            try? FileManager.default.removeItem(atPath: runtimeDirectory)
            throw error
        }
        do {
            waylandSocket = try Self.waitUntilReady(runtimeDirectory, ipcSocket, process, timeout: timeout)
        } catch {
            process.stop()
            try? FileManager.default.removeItem(atPath: runtimeDirectory)
            throw error
        }
    }

    deinit { stop() }

    public func stop() {
        process.stop()
        try? FileManager.default.removeItem(atPath: runtimeDirectory)
    }

    /// Runs a sway command (what `swaymsg COMMAND` does) and throws sway's error if it failed.
    public func command(_ text: String) throws {
        try process.checkRunning(while: "running \"\(text)\"")
        let reply = try Self.call(.runCommand, text, at: ipcSocket)
        guard let results = reply.arrayValue, !results.isEmpty else {
            throw HarnessError("sway answered \"\(text)\" with \(reply.text)")
        }
        for result in results where result["success"]?.boolValue != true {
            throw HarnessError("sway refused \"\(text)\": \(result["error"]?.stringValue ?? "no reason given")")
        }
    }

    /// The names of the outputs sway has now, from its IPC.
    public func outputNames() throws -> [String] {
        let reply = try Self.call(.getOutputs, "", at: ipcSocket)
        guard let outputs = reply.arrayValue else { throw HarnessError("sway answered get_outputs with \(reply.text)") }
        return outputs.compactMap { $0["name"]?.stringValue }
    }

    /// Adds a headless output; it takes the next configured name and place.
    public func createOutput() throws {
        try command("create_output")
    }

    /// The end of sway's stderr, for failure messages.
    public var logTail: String { process.logTail }

    /// Throws with sway's stderr if sway has exited.
    public func checkRunning(while doing: String) throws {
        try process.checkRunning(while: doing)
    }

    /// One request on a connection of its own, and its reply.
    private static func call(_ type: SwayIPC.MessageType, _ payload: String, at path: String) throws -> JSON {
        do {
            return try SwayIPC(path: path).call(type, payload, timeoutMs: 5000)
        } catch {
            throw HarnessError("\(error)")
        }
    }

    private static func unprivilegedUser() throws -> (name: String, uid: uid_t, gid: gid_t)? {
        guard geteuid() == 0 else { return nil }
        guard let entry = getpwnam("nobody") else {
            throw HarnessError("running as root, and there is no user \"nobody\" to run sway as (sway refuses root)")
        }
        return ("nobody", entry.pointee.pw_uid, entry.pointee.pw_gid)
    }

    /// Waits for the Wayland socket and for the IPC to answer get_outputs with an output;
    /// returns the Wayland socket's path. sway creates no file or event that says "ready",
    /// so this polls, bounded.
    private static func waitUntilReady(
        _ directory: String, _ ipcSocket: String, _ process: ChildProcess, timeout: Duration
    ) throws -> String {
        var socket: String?
        var lastError = "the sockets did not appear"
        do {
            try eventually("sway to listen in \(directory) and report an output", timeout: timeout) {
                try process.checkRunning(while: "starting")
                if socket == nil {
                    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
                    socket = names.first { $0.hasPrefix("wayland-") && !$0.hasSuffix(".lock") }.map { directory + "/" + $0 }
                }
                guard socket != nil, FileManager.default.fileExists(atPath: ipcSocket) else { return false }
                do {
                    let outputs = try call(.getOutputs, "", at: ipcSocket).arrayValue ?? []
                    lastError = "get_outputs listed no output"
                    return !outputs.isEmpty
                } catch {
                    lastError = "\(error)"
                    return false
                }
            }
        } catch {
            // A sway that exited has said why in its stderr already.
            guard process.isRunning else { throw error }
            throw HarnessError("\(error) (last: \(lastError))\n\(process.logTail)")
        }
        return socket!
    }
}
