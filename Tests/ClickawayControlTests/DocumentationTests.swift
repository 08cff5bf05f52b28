import ClickawayControl
import ClickawayCore
import ClickawayJSON
import Foundation
import Testing

/// The control protocol as docs/control-protocol.md documents it and bench/clickbench.c speaks it, held
/// to the types the daemon and clickawayctl share.
@Suite struct ProtocolDocumentationTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: repository.appendingPathComponent(path), encoding: .utf8)
    }

    /// A document's text from `heading` to the next heading of its level or above.
    static func section(_ heading: String, of text: String) throws -> String {
        let lines = text.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex(of: heading), "no \(heading)")
        let level = heading.prefix { $0 == "#" }.count
        let end = lines[(start + 1)...].firstIndex { line in
            let hashes = line.prefix { $0 == "#" }.count
            return hashes > 0 && hashes <= level && line.dropFirst(hashes).hasPrefix(" ")
        } ?? lines.count
        return lines[start..<end].joined(separator: "\n")
    }

    @Test func theProtocolDocumentListsEveryRequestAndNoOther() throws {
        let socket = try Self.section("## The socket", of: Self.read("docs/control-protocol.md"))
        for name in ControlRequest.Name.allCases where ![.close, .toggle].contains(name) {
            #expect(socket.contains(ControlRequest.documentedForm(name)), "docs/control-protocol.md lacks \(ControlRequest.documentedForm(name))")
        }
        #expect(socket.contains("(and `close`, `toggle`)"))
        for match in socket.matches(of: /\{"request":"([a-z_]+)"/) {
            #expect(ControlRequest.Name(rawValue: String(match.output.1)) != nil, "docs/control-protocol.md documents a request \(match.output.1) the daemon does not know")
        }
    }

    @Test func theProtocolDocumentTablesEveryMonitorEventWithItsFields() throws {
        let section = try Self.section("## What clickawayctl prints", of: Self.read("docs/control-protocol.md")).components(separatedBy: "\n")
        let start = try #require(section.firstIndex { $0.hasPrefix("`monitor` events") }, "docs/control-protocol.md introduces no monitor table")
        let rows = section[(start + 1)...].drop { !$0.hasPrefix("|") }.prefix { $0.hasPrefix("|") }
            .dropFirst().map { $0.components(separatedBy: "|") }.filter { $0.count == 4 && $0[1].contains("`") }
        var documented: [String] = []
        for row in rows {
            let events = row[1].matches(of: /`([a-z_]+)`/).map { String($0.output.1) }
            documented += events
            let entry = try #require(MonitorEvent.documentation.first { $0.events.map(\.rawValue) == events },
                                     "the monitor table has a row for \(events), which the daemon does not send together")
            for field in entry.fields { #expect(row[2].contains("`\(field)`"), "the monitor table's row for \(events) lacks \(field)") }
        }
        #expect(documented.sorted() == MonitorEvent.Name.allCases.map(\.rawValue).sorted())
    }

    @Test func theHelpSentenceNamesEveryEventAndField() {
        let help = MonitorEvent.helpText
        for name in MonitorEvent.Name.allCases { #expect(help.contains(name.rawValue)) }
        for entry in MonitorEvent.documentation {
            for field in entry.fields { #expect(help.contains(field)) }
        }
        #expect(help.contains("key, message"), "the Escape form of grab_refused")
    }

    /// bench/clickbench.c builds its requests and reads the replies by hand, in C.
    @Test func clickbenchSpeaksTheProtocol() throws {
        let source = try Self.read("bench/clickbench.c")
        let literals = source.matches(of: /"((?:[^"\\]|\\.)*)"/).map { String($0.output.1).replacingOccurrences(of: "\\\"", with: "\"") }
        let requests = literals.filter { $0.hasPrefix(#"{"request":"#) }
        #expect(Set(requests.compactMap { try? ControlRequest(line: $0).name }) == [.sync, .status, .reload])
        for request in requests { #expect(throws: Never.self, "clickbench sends \(request)") { try ControlRequest(line: request) } }
        // What it compares replies with and looks for in them.
        #expect(literals.contains(ControlReply.ok().text), "sync's reply, compared whole")
        #expect(source.contains(#"strncmp(reply, "{\"ok\":true", 10)"#) && ReloadReply(popups: 1, files: []).json.text.hasPrefix(#"{"ok":true"#))
        let status = StatusReport(
            backend: "x11-shield",
            display: .x11(X11Status(fallback: nil, display: ":0",
                                    grab: GrabStatus(active: true, buttons: [1], held: [], refused: []),
                                    shield: ShieldStatus(window: "0x1", mapped: true, holes: []),
                                    escape: EscapeStatus(active: false, refused: []))),
            config: [], popups: 1, rejected: nil, running: .files, unavailable: [],
            open: [OpenPopup(popup: "bench", window: "0x2", rect: Rect(x: 0, y: 0, width: 1, height: 1))],
            monitors: 0, lastError: nil).json.text
        let expectFunction = try #require(source.firstRange(of: "static void ctl_expect"), "clickbench.c has no ctl_expect")
        let rest = source[expectFunction.lowerBound...]
        let body = rest[..<(rest.firstRange(of: "\n}\n")?.lowerBound ?? rest.endIndex)]
        let needles = String(body).matches(of: /"(\\"(?:[^"\\]|\\.)*)"/).map {
            String($0.output.1).replacingOccurrences(of: "\\\"", with: "\"")
        }.filter { !$0.contains("request") }
        #expect(Set(needles) == [#""grab":{"active":true"#, #""shield":{"#, #""mapped":true"#, #""popup":"bench""#])
        for needle in needles { #expect(status.contains(needle), "clickbench looks for \(needle) in \(status)") }
    }
}

/// docs/development.md's layout paragraph and ARCHITECTURE.md against the package as it is.
@Suite struct LayoutDocumentationTests {
    static func targets(_ kinds: String) throws -> [String] {
        let manifest = try ProtocolDocumentationTests.read("Package.swift")
        return manifest.matches(of: try Regex(#"\.(?:\#(kinds))\(\s*name: "(\w+)""#)).compactMap { $0.output[1].substring.map(String.init) }
    }

    @Test func theLayoutParagraphNamesEveryProductTargetAndTestSupport() throws {
        let development = try ProtocolDocumentationTests.read("docs/development.md")
        let layout = try #require(development.components(separatedBy: "\n\n").first { $0.hasPrefix("Layout") }, "docs/development.md has no layout paragraph")
        let named = Set(layout.matches(of: /`(\w+)`/).map { String($0.output.1) })
        let product = try Self.targets("target|executableTarget|systemLibrary")
        #expect(!product.isEmpty)
        for target in product { #expect(named.contains(target), "the layout paragraph does not name \(target)") }
        let looksLikeATarget = { (name: String) in
            name.hasPrefix("Clickaway") || name.hasPrefix("clickaway") || name.hasSuffix("Harness") || name.hasSuffix("Support")
                || (name.first == "C" && name.dropFirst().first?.isUppercase == true)
        }
        for name in named where looksLikeATarget(name) {
            #expect(product.contains(name), "the layout paragraph names \(name), which the package does not have")
        }
    }

    @Test func architectureNamesEveryTargetAndTheFilesItPointsTo() throws {
        let architecture = try ProtocolDocumentationTests.read("ARCHITECTURE.md")
        for target in try Self.targets("target|executableTarget|systemLibrary|testTarget") {
            #expect(architecture.contains("`\(target)`"), "ARCHITECTURE.md does not name \(target)")
        }
        for match in architecture.matches(of: /`((?:Sources|Tests|man|Fuzz)\/[^`]+?)`/) {
            let path = String(match.output.1).replacingOccurrences(of: "<Name>/", with: "")
            #expect(FileManager.default.fileExists(atPath: ProtocolDocumentationTests.repository.appendingPathComponent(path).path),
                    "ARCHITECTURE.md points to \(path), which is not there")
        }
    }
}

/// The seams ARCHITECTURE.md pictures, held to the code: `Display` stays narrow, and the
/// picture says how narrow.
@Suite struct SeamDocumentationTests {
    /// The requirements of the protocol `name` in `file`: its `func` and `var` lines.
    static func requirements(of name: String, in file: String) throws -> [String] {
        let source = try ProtocolDocumentationTests.read(file)
        let start = try #require(source.range(of: "protocol \(name):"), "\(file) has no protocol \(name)")
        // To the closing brace at the start of a line: `{ get }` is part of a requirement.
        let lines = source[start.upperBound...].split(separator: "\n").prefix { $0 != "}" }
        return lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.hasPrefix("func ") || $0.hasPrefix("var ") }
    }

    @Test func displayHasAtMostFourteenRequirementsAsThePictureSays() throws {
        let display = try Self.requirements(of: "Display", in: "Sources/ClickawayDaemon/Display.swift")
        #expect(display.count <= 14, "Display has \(display.count) requirements: \(display)")
        let architecture = try ProtocolDocumentationTests.read("ARCHITECTURE.md")
        #expect(architecture.contains("\(display.count) requirements"), "ARCHITECTURE.md's picture does not say Display has \(display.count)")
    }
}

/// The README and docs/ link to each other and to the repository's files: every link leads
/// to a file that is there, and every #anchor to a heading of it (as GitHub names them).
@Suite struct DocumentLinkTests {
    /// GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`.
    static func anchor(_ heading: String) -> String {
        String(heading.lowercased().compactMap { character -> Character? in
            if character == " " { return "-" }
            return character.isLetter || character.isNumber || character == "-" || character == "_" ? character : nil
        })
    }

    @Test func everyLinkLeadsSomewhere() throws {
        let root = ProtocolDocumentationTests.repository
        let docs = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.map { "docs/\($0)" }
        #expect(docs.count >= 8, "\(docs)")
        var checked = 0
        for document in ["README.md"] + docs {
            let text = try ProtocolDocumentationTests.read(document)
            let directory = document.split(separator: "/").dropLast().map(String.init)
            for match in text.matches(of: /\]\(([^)\s]+)\)/) {
                let target = String(match.output.1)
                guard !target.hasPrefix("http://"), !target.hasPrefix("https://") else { continue }
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                var components = directory
                for component in parts[0].split(separator: "/").map(String.init) {
                    if component == ".." { components = components.dropLast() } else if component != "." { components.append(component) }
                }
                let relative = parts[0].isEmpty ? document : components.joined(separator: "/")
                #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent(relative).path),
                        "\(document) links to \(target), which is not there")
                if parts.count == 2, relative.hasSuffix(".md") {
                    let headings = try ProtocolDocumentationTests.read(relative).split(separator: "\n")
                        .filter { $0.hasPrefix("#") }.map { Self.anchor($0.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)) }
                    #expect(headings.contains(parts[1]), "\(document) links to \(target): \(relative) has no such heading")
                }
                checked += 1
            }
        }
        #expect(checked > 20)
    }
}
