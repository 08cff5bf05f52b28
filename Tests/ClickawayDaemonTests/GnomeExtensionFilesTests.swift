import ClickawayCore
@testable import ClickawayDaemon
import ClickawayJSON
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

    /// `show` carries each fill as `[x, y, width, height, 0xRRGGBB]`, at most
    /// `showFillLimit` of them (the bottom ones), and null for no drawing.
    @Test func theShowCommandCarriesAtMostItsLimit() throws {
        let fills = (0..<GnomeProtocol.showFillLimit + 10).map { ShowPicture.Fill(rect: Rect(x: Int32($0), y: -2, width: 3, height: 4), colour: 0x3070D0) }
        let message = try JSON.parse(GnomeProtocol.show(fills))
        #expect(message["cmd"]?.stringValue == GnomeProtocol.Command.show.rawValue)
        let sent = message["fills"]?.arrayValue ?? []
        #expect(sent.count == GnomeProtocol.showFillLimit)
        #expect(sent.first == .array([0, -2, 3, 4, 0x3070D0].map { .int($0) }))
        #expect(sent.last?.arrayValue?.first == .int(Int64(GnomeProtocol.showFillLimit - 1)))
        #expect(try JSON.parse(GnomeProtocol.show(nil))["fills"] == .null)
    }

    static func jsName(_ word: String) -> String {
        let parts = word.split(separator: "-")
        return parts.enumerated().map { $0.offset == 0 ? String($0.element) : $0.element.prefix(1).uppercased() + $0.element.dropFirst() }.joined()
    }
}
