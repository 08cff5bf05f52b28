import ClickawayConfig
import ClickawayTOML
import Foundation
import Testing

/// The toml-test corpus (github.com/toml-lang/toml-test, as Debian ships it in
/// golang-github-burntsushi-toml-dev): every valid file decodes to the values and types of
/// its JSON twin, every invalid file is refused with a line and column.
enum Corpus {
    static let directory = ProcessInfo.processInfo.environment["TOML_TEST_DIR"]
        ?? "/usr/share/gocode/src/github.com/BurntSushi/toml/internal/toml-test/tests"
    static var isInstalled: Bool { FileManager.default.fileExists(atPath: directory + "/valid") }
    static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// Valid files that are not TOML 1.0, and why: each must still be refused.
    static let notTOML10: [String: String] = [
        "valid/string/escape-esc": "\\e is new in TOML 1.1 (the corpus's own 1.0.0 profile leaves it out)",
    ]

    /// The `.toml` files under `valid` or `invalid`, as "valid/key/dotted" (no extension).
    static func cases(_ kind: String) -> [String] {
        let root = URL(fileURLWithPath: directory + "/" + kind)
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [] }
        return walker.compactMap { item -> String? in
            guard let url = item as? URL, url.pathExtension == "toml" else { return nil }
            return kind + "/" + url.path.dropFirst(root.path.count + 1).dropLast(5)
        }.sorted()
    }

    static func bytes(_ name: String, _ ext: String = "toml") throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(directory)/\(name).\(ext)")))
    }
}

@Suite(.enabled(if: Corpus.isInstalled || Corpus.isCI, "the toml-test corpus is not installed (apt-get install golang-github-burntsushi-toml-dev)"))
struct ConformanceTests {
    @Test func corpusIsThere() {
        #expect(Corpus.isInstalled, "no toml-test corpus at \(Corpus.directory): make deps installs golang-github-burntsushi-toml-dev")
        #expect(Corpus.cases("valid").count >= 100)
        #expect(Corpus.cases("invalid").count >= 200)
    }

    @Test func validFilesDecodeToTheirJSON() throws {
        var passed = 0
        var failures: [String] = []
        let cases = Corpus.cases("valid")
        for name in cases where Corpus.notTOML10[name] == nil {
            let expected = try JSONSerialization.jsonObject(with: Data(try Corpus.bytes(name, "json")))
            do {
                let document = try TOMLDocument.parse(utf8: try Corpus.bytes(name))
                if let difference = Tagged.difference(expected, Tagged.json(document.root), at: "") {
                    failures.append("\(name): \(difference)")
                } else {
                    passed += 1
                }
            } catch {
                failures.append("\(name): refused: \(error)")
            }
        }
        print("toml-test valid: \(passed) of \(cases.count - Corpus.notTOML10.count) pass (\(Corpus.notTOML10.count) listed as not TOML 1.0)")
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        #expect(passed >= 99)
    }

    @Test func notTOML10FilesAreRefused() throws {
        for name in Corpus.notTOML10.keys.sorted() {
            #expect(throws: TOMLError.self, "\(name)") { try TOMLDocument.parse(utf8: try Corpus.bytes(name)) }
        }
    }

    @Test func invalidFilesAreRefusedWithFileLineAndColumn() throws {
        var passed = 0
        var failures: [String] = []
        let cases = Corpus.cases("invalid")
        for name in cases {
            let path = "\(Corpus.directory)/\(name).toml"
            let bytes = try Corpus.bytes(name)
            do throws(TOMLError) {
                _ = try TOMLDocument.parse(utf8: bytes)
                failures.append("\(name): accepted")
                continue
            } catch {
                if error.span == nil { failures.append("\(name): no position: \(error)") }
            }
            // Through the loader, as `clickawayctl check` reads it: file:line:col and the caret.
            do {
                _ = try ConfigLoader.load(file: path, environment: [:])
                failures.append("\(name): the loader accepted it")
            } catch {
                guard case .invalid(let diagnostics) = error, let first = diagnostics.first,
                      first.file == path, first.line != nil, first.column != nil,
                      first.message.hasPrefix("invalid TOML: "), first.rendered.contains("^") else {
                    failures.append("\(name): \(error)")
                    continue
                }
                passed += 1
            }
        }
        print("toml-test invalid: \(passed) of \(cases.count) refused with file:line:col")
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }
}

/// toml-test's JSON form: tables are objects, arrays are arrays, every other value is
/// `{"type": T, "value": "text"}`.
enum Tagged {
    static func json(_ value: TOMLValue) -> Any {
        switch value.kind {
        case .table:
            return Dictionary(uniqueKeysWithValues: value.entries.map { ($0.key!, json($0)) })
        case .array:
            return value.elements.map(json)
        case .string: return scalar("string", value.string!)
        case .integer: return scalar("integer", String(value.integer!))
        case .float:
            let x = value.float!
            return scalar("float", x.isNaN ? "nan" : x.isInfinite ? (x < 0 ? "-inf" : "inf") : "\(x)")
        case .boolean: return scalar("bool", value.bool! ? "true" : "false")
        case .offsetDateTime: return scalar("datetime", value.dateTime!.description)
        case .localDateTime: return scalar("datetime-local", value.dateTime!.description)
        case .localDate: return scalar("date-local", value.dateTime!.description)
        case .localTime: return scalar("time-local", value.dateTime!.description)
        }
    }

    private static func scalar(_ type: String, _ value: String) -> [String: String] { ["type": type, "value": value] }

    /// How `have` differs from `want`, or nil.
    static func difference(_ want: Any, _ have: Any, at path: String) -> String? {
        if let w = want as? [String: Any], w.count == 2, let type = w["type"] as? String, let value = w["value"] as? String {
            guard let h = have as? [String: String], h["type"] == type, let mine = h["value"] else {
                return "\(path): expected \(type) \(value), found \(have)"
            }
            return same(type, value, mine) ? nil : "\(path): expected \(type) \(value), found \(mine)"
        }
        if let w = want as? [String: Any] {
            guard let h = have as? [String: Any] else { return "\(path): expected a table, found \(have)" }
            guard Set(w.keys) == Set(h.keys) else { return "\(path): keys \(w.keys.sorted()) expected, found \(h.keys.sorted())" }
            for key in w.keys.sorted() {
                if let d = difference(w[key]!, h[key]!, at: path + "." + key) { return d }
            }
            return nil
        }
        if let w = want as? [Any] {
            guard let h = have as? [Any], h.count == w.count else { return "\(path): expected \(w.count) elements, found \(have)" }
            for (i, (a, b)) in zip(w, h).enumerated() {
                if let d = difference(a, b, at: path + "[\(i)]") { return d }
            }
            return nil
        }
        return "\(path): unexpected expectation \(want)"
    }

    private static func same(_ type: String, _ want: String, _ have: String) -> Bool {
        switch type {
        case "float":
            guard let w = Double(want), let h = Double(have) else { return false }
            return w == h || (w.isNaN && h.isNaN)
        case "datetime", "datetime-local", "date-local", "time-local":
            return normalized(want) == normalized(have)
        default:
            return want == have
        }
    }

    /// RFC 3339 text in one spelling: T and Z upper case, no trailing zeros in the fraction, Z for ±00:00.
    static func normalized(_ text: String) -> String {
        var s = text.uppercased()
        if s.count > 10, s[s.index(s.startIndex, offsetBy: 10)] == " " {
            s.replaceSubrange(s.index(s.startIndex, offsetBy: 10)...s.index(s.startIndex, offsetBy: 10), with: "T")
        }
        if s.hasSuffix("+00:00") || s.hasSuffix("-00:00") { s = String(s.dropLast(6)) + "Z" }
        if let dot = s.firstIndex(of: ".") {
            let digitsEnd = s[s.index(after: dot)...].firstIndex { !$0.isNumber } ?? s.endIndex
            var fraction = String(s[s.index(after: dot)..<digitsEnd])
            while fraction.hasSuffix("0") { fraction.removeLast() }
            s = String(s[..<dot]) + (fraction.isEmpty ? "" : "." + fraction) + String(s[digitsEnd...])
        }
        return s
    }
}

@Suite struct ComparisonTests {
    /// The comparison the corpus test relies on sees a wrong value, a wrong type, a missing key.
    @Test func comparisonNoticesEveryKindOfDifference() throws {
        let decoded = Tagged.json(try TOMLDocument.parse("a = 2\nb = 1979-05-27T07:32:00.5Z\n[c]\nd = [1.5]\n").root)
        let right: [String: Any] = ["a": ["type": "integer", "value": "2"],
                                    "b": ["type": "datetime", "value": "1979-05-27t07:32:00.500+00:00"],
                                    "c": ["d": [["type": "float", "value": "1.5"]]]]
        #expect(Tagged.difference(right, decoded, at: "") == nil)
        var wrong = right
        wrong["a"] = ["type": "integer", "value": "3"]
        #expect(Tagged.difference(wrong, decoded, at: "") != nil)
        wrong["a"] = ["type": "float", "value": "2"]
        #expect(Tagged.difference(wrong, decoded, at: "") != nil)
        wrong = right
        wrong["e"] = ["type": "bool", "value": "true"]
        #expect(Tagged.difference(wrong, decoded, at: "") != nil)
        wrong = right
        wrong["b"] = ["type": "datetime", "value": "1979-05-27T07:32:00.4Z"]
        #expect(Tagged.difference(wrong, decoded, at: "") != nil)
    }
}
