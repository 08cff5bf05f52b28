import Foundation
import ProcessSupport

/// A session bus of the test's own: a dbus-daemon listening in `directory`, with no service
/// activation (only the programs the test starts answer on it). Stopped when released.
final class PrivateSessionBus {
    let address: String
    private let process: ChildProcess

    init(in directory: URL, environment: [String: String]) throws {
        let socket = directory.appendingPathComponent("bus").path
        address = "unix:path=\(socket)"
        let config = directory.appendingPathComponent("bus.conf").path
        try TestFiles.write("""
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>\(address)</listen>
              <policy context="default"><allow send_destination="*"/><allow receive_sender="*"/><allow own="*"/></policy>
            </busconfig>
            """, to: config)
        let process = try ChildProcess(["dbus-daemon", "--nofork", "--nopidfile", "--config-file=\(config)"], environment: environment)
        do {
            try eventually("dbus-daemon to listen on \(socket)", timeout: .seconds(10), every: .milliseconds(10)) {
                try process.checkRunning(while: "starting")
                return FileManager.default.fileExists(atPath: socket)
            }
        } catch {
            process.stop()
            throw error
        }
        self.process = process
    }

    deinit { process.stop() }
}
