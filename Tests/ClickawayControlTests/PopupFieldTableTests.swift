import ClickawayControl
import ClickawayCore
import Foundation
import Testing

/// `PopupFields` and `SettingFields`, the tables of configuration keys, against what is written
/// elsewhere: clickaway.toml(5) (each key in its section, with its values, default and limits,
/// and the version in its footer), and the keys the runtime request (`clickawayctl open`) takes.
@Suite struct PopupFieldTableTests {
    typealias Docs = ProtocolDocumentationTests

    /// clickaway.toml(5)'s items, section by section: each `.It Cm KEY` line with the lines up
    /// to the next item, the end of its list or the next section.
    static func manualItems() throws -> [String: [String: (header: String, body: String)]] {
        var items: [String: [String: (header: String, body: String)]] = [:]
        var section = "", key: String?, header = "", body: [String] = []
        func flush() {
            if let key { items[section, default: [:]][key] = (header, body.joined(separator: "\n")) }
            key = nil
            body = []
        }
        for line in try Docs.read("man/clickaway.toml.5").components(separatedBy: "\n") {
            if line.hasPrefix(".Sh ") || line.hasPrefix(".It ") || line == ".El" { flush() }
            if line.hasPrefix(".Sh ") { section = String(line.dropFirst(4)) }
            if line.hasPrefix(".It Cm "), let name = line.split(separator: " ").dropFirst(2).first {
                key = String(name)
                header = line
            } else if key != nil {
                body.append(line)
            }
        }
        flush()
        return items
    }

    /// How the page writes a value the tables write as Markdown: no backticks, `"` as `\(dq`.
    static func manual(_ value: String) -> String {
        value.replacingOccurrences(of: "`", with: "").replacingOccurrences(of: "\"", with: "\\(dq")
    }

    /// The item says its default as `Default`, then the value as a literal.
    static func expectDefault(_ value: String, in item: (header: String, body: String), of key: String) {
        #expect(item.body.contains("Default\n.Li \(manual(value)) ."), "clickaway.toml(5) does not give \(key)'s default \(value):\n\(item.body)")
    }

    @Test func theManualPageDescribesEveryPopupFieldWithItsValuesDefaultAndLimits() throws {
        let items = try Self.manualItems()
        for field in PopupFields.all {
            let section = field.inherited ? "DEFAULTS" : "POPUPS"
            let item = try #require(items[section]?[field.key], "clickaway.toml(5) has no item for \(field.key) under \(section)")
            if let value = field.defaultValue {
                Self.expectDefault(value, in: item, of: field.key)
            } else if field.key == "name" {
                #expect(item.body.contains("Required"), "clickaway.toml(5) does not say name is required")
            }
            let text = item.header + "\n" + item.body
            if field.type.hasPrefix("boolean") { #expect(item.header.contains("Li true | false"), "\(item.header)") }
            // The limits: every number the type names.
            for number in field.type.matches(of: /\d+/).map({ String($0.output) }) {
                #expect(text.contains(number), "clickaway.toml(5) does not give \(field.key)'s limit \(number)")
            }
            // Each written value: the choices, the shapes of arrays and tables.
            for segment in field.type.matches(of: /`([^`]+)`/).map({ String($0.output.1) }) {
                if let words = segment.wholeMatch(of: /\[(\w+(?:, \w+)*)\]/) {
                    let listed = words.output.1.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " , ")
                    #expect(item.header.contains(listed), "clickaway.toml(5)'s \(field.key) does not show \(segment): \(item.header)")
                } else {
                    #expect(text.contains(Self.manual(segment)), "clickaway.toml(5)'s \(field.key) does not show \(segment)")
                }
            }
        }
        let described = Set(items["DEFAULTS"]?.keys.map { $0 } ?? []).union(items["POPUPS"]?.keys.map { $0 } ?? [])
        #expect(described == Set(PopupFields.popupKeys), "clickaway.toml(5) describes \(described.subtracting(PopupFields.popupKeys)) as popup keys")
    }

    @Test func theManualPageDescribesEverySettingWithItsValuesAndDefault() throws {
        let items = try Self.manualItems()
        #expect(Set(items["SETTINGS"]?.keys.map { $0 } ?? []) == Set(SettingFields.keys))
        for field in SettingFields.all {
            let item = try #require(items["SETTINGS"]?[field.key], "clickaway.toml(5) has no item for \(field.key)")
            #expect(item.header.contains("No = Li " + field.values.map(Self.manual).joined(separator: " | ")), "\(item.header)")
            Self.expectDefault(field.defaultValue, in: item, of: field.key)
        }
    }

    /// The page is written by hand: its footer's version is Version.swift's.
    @Test func theManualPageCarriesTheVersion() throws {
        let page = try Docs.read("man/clickaway.toml.5")
        #expect(page.contains("\n.Os clickaway \(clickawayVersion)\n"), "clickaway.toml(5)'s .Os is not clickaway \(clickawayVersion)")
    }

    /// What `clickawayctl open` may set is a popup field under the request's name for it
    /// (the popup's name is "popup"), or the request's own (which process, how long, like whom).
    @Test func theRuntimeRequestTakesTheRuntimeFields() {
        let requestName = { (key: String) in key == "name" ? "popup" : key }
        let runtime = PopupFields.all.filter(\.runtime).map { requestName($0.key) }
        #expect(Set(runtime).isSubset(of: RuntimePopupRequest.keys), "\(Set(runtime).subtracting(RuntimePopupRequest.keys))")
        let requestOnly: Set = ["pid", "timeout_ms", "like"]
        #expect(Set(RuntimePopupRequest.keys).subtracting(requestOnly) == Set(runtime))
    }

    /// The pages written by hand name every popup key a script may set: the protocol its JSON
    /// field, docs/scripts.md its `clickawayctl open` option.
    @Test func theScriptDocumentsNameEveryRuntimeKey() throws {
        let protocolPage = try Docs.read("docs/control-protocol.md"), scripts = try Docs.read("docs/scripts.md")
        for row in PopupFields.options {
            guard let option = row.openOption else { continue }
            #expect(protocolPage.contains("`\"\(row.key)\"`"), "docs/control-protocol.md does not name \(row.key)")
            #expect(scripts.contains("`--\(option.name)"), "docs/scripts.md does not name --\(option.name)")
        }
    }
}
