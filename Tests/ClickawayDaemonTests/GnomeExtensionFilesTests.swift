@testable import ClickawayDaemon
import Foundation
import Testing

/// The GNOME Shell extension's protocol constants and metadata are written from
/// `GnomeProtocol`, the daemon's one definition of the messages: the files in
/// data/gnome-shell/ must be exactly that. CLICKAWAY_WRITE_GNOME_FILES=1 writes them.
@Suite struct GnomeExtensionFilesTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("data/gnome-shell")

    static let files: [(name: String, text: String)] = [
        ("protocol.js", GnomeProtocol.javaScript),
        ("metadata-imports.json", GnomeProtocol.metadata(shellVersions: GnomeProtocol.importsShellVersions)),
        ("metadata-module.json", GnomeProtocol.metadata(shellVersions: GnomeProtocol.moduleShellVersions)),
    ]

    @Test(arguments: files.map(\.name)) func theFileIsWrittenFromTheSwiftDefinition(name: String) throws {
        let expected = Self.files.first { $0.name == name }!.text
        let url = Self.directory.appendingPathComponent(name)
        if ProcessInfo.processInfo.environment["CLICKAWAY_WRITE_GNOME_FILES"] == "1" {
            try expected.write(to: url, atomically: true, encoding: .utf8)
        }
        let actual = try String(contentsOf: url, encoding: .utf8)
        #expect(actual == expected, "data/gnome-shell/\(name) differs from GnomeProtocol: run CLICKAWAY_WRITE_GNOME_FILES=1 swift test --filter GnomeExtensionFilesTests")
    }

    /// The body names every event and command through PROTOCOL, and every one it names exists.
    @Test func theBodyUsesOnlyTheDefinedMessages() throws {
        let body = try String(contentsOf: Self.directory.appendingPathComponent("body.js"), encoding: .utf8)
        let used = Set(body.matches(of: /PROTOCOL\.(ev|cmd)\.([A-Za-z]+)/).map { "\($0.output.1).\($0.output.2)" })
        let events = GnomeProtocol.Event.allCases.map { "ev." + Self.jsName($0.rawValue) }
        let commands = GnomeProtocol.Command.allCases.map { "cmd." + Self.jsName($0.rawValue) }
        #expect(used == Set(events + commands))
        // No message spelt out by hand beside PROTOCOL.
        #expect(!body.contains("ev: '") && !body.contains("cmd: '"))
        for answer in GnomeProtocol.Answer.allCases where answer != .swallow {
            #expect(body.contains("'\(answer.rawValue)'"), "the body acts on the answer \(answer.rawValue)")
        }
    }

    static func jsName(_ word: String) -> String {
        let parts = word.split(separator: "-")
        return parts.enumerated().map { $0.offset == 0 ? String($0.element) : $0.element.prefix(1).uppercased() + $0.element.dropFirst() }.joined()
    }
}
