import ClickawayControl
import ClickawayCore
import Foundation
import Testing

/// `PopupFields`, the one table of popup keys, against what is written elsewhere: the README's
/// `[defaults]` and `[[popup]]` tables (key, type, default), clickaway.toml(5), and the keys
/// the runtime request (`clickawayctl open`) takes.
@Suite struct PopupFieldTableTests {
    typealias Docs = ProtocolDocumentationTests

    /// The rows of the first Markdown table in `section`, as trimmed cells.
    static func rows(_ section: String) -> [[String]] {
        section.components(separatedBy: "\n")
            .filter { $0.hasPrefix("| ") && !$0.hasPrefix("| ---") }
            .dropFirst()
            .map { line in line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) } }
    }

    @Test func theReadmesDefaultsTableIsTheInheritedFields() throws {
        let rows = Self.rows(try Docs.section("### `[defaults]`", of: Docs.read("README.md")))
        let inherited = PopupFields.all.filter(\.inherited)
        #expect(rows.map { $0[0] } == inherited.map { "`\($0.key)`" })
        for (row, field) in zip(rows, inherited) {
            #expect(row[1] == field.type, "README's type of \(field.key)")
            #expect(row[2] == field.defaultValue, "README's default of \(field.key)")
        }
    }

    @Test func theReadmesPopupTableHasEveryOtherField() throws {
        let rows = Self.rows(try Docs.section("### `[[popup]]`", of: Docs.read("README.md")))
        for field in PopupFields.all where !field.inherited {
            let name = field.key == "region" ? "`[[popup.region]]`" : "`\(field.key)`"
            let row = try #require(rows.first { $0[0] == name }, "README's [[popup]] table has no \(name)")
            #expect(row[1] == field.type, "README's type of \(field.key)")
            #expect(row[2] == (field.defaultValue ?? (field.key == "name" ? "required" : "")), "README's default of \(field.key)")
        }
        let inheritedRow = try #require(rows.first { $0[2] == "from `[defaults]`" })
        #expect(inheritedRow[0] == PopupFields.inheritedKeys.map { "`\($0)`" }.joined(separator: ", "))
    }

    @Test func theManualPageDescribesEveryField() throws {
        let page = try Docs.read("man/clickaway.toml.5")
        for field in PopupFields.all {
            #expect(page.contains(".It Cm \(field.key) No =") || page.contains(".It Cm \(field.key)\n"),
                    "clickaway.toml(5) has no item for \(field.key)")
        }
    }

    /// What `clickawayctl open` may set is a popup field under the request's name for it
    /// (the popup's name is "popup"), or the request's own (which process, how long, like whom).
    @Test func theRuntimeRequestTakesTheRuntimeFields() {
        let requestName = { (key: String) in key == "name" ? "popup" : key }
        let runtime = PopupFields.all.filter(\.runtime).map { requestName($0.key) }
        #expect(Set(runtime).isSubset(of: RuntimePopupRequest.keys), "\(Set(runtime).subtracting(RuntimePopupRequest.keys))")
        let requestOnly: Set = ["pid", "timeout_ms", "like"]
        #expect(Set(RuntimePopupRequest.keys).subtracting(requestOnly) == Set(runtime))
        #expect(RuntimePopupRequest.graceLimitMs == PopupFields.graceLimitMs)
    }
}
