import ClickawayCore
import TOMLKit

/// A value from the document together with where it is: its TOML path (to find the line)
/// and its path in human form (to name it in a message).
struct Node {
    let value: TOMLValueConvertible
    let source: TOMLPath
    let human: ModelPath
}

/// A table from the document, with the same two paths.
struct TableNode {
    let table: TOMLTable
    let source: TOMLPath
    let human: ModelPath

    subscript(key: String) -> Node? {
        table[key].map { Node(value: $0, source: source.appending(key), human: human.appending(.key(key))) }
    }
}

/// One table of an array of tables, with its position in the array.
struct TableElement {
    let index: Int
    let table: TOMLTable
    let source: TOMLPath
}

/// Reads typed values out of one file's TOML. Every problem becomes a diagnostic and reading
/// goes on, so one run reports everything; a reader returns nil for a value it could not use.
final class ConfigReader {
    let file: String
    private let index: SourceIndex
    private let lines: SourceLines
    private(set) var diagnostics: [Diagnostic] = []

    init(file: String, index: SourceIndex, lines: SourceLines) {
        self.file = file
        self.index = index
        self.lines = lines
    }

    // MARK: Reporting

    func report(_ message: String, at path: TOMLPath, _ token: SourceIndex.Token, human: ModelPath) {
        diagnostics.append(Diagnostic(file: file, span: index.span(of: path, token), lines: lines,
                                      path: human.description, message: message))
    }

    /// A problem with a value: the caret goes under the value.
    func report(_ message: String, at node: Node) {
        report(message, at: node.source, .value, human: node.human)
    }

    /// A problem with a table as a whole (a missing key): the caret goes under its header or opening brace.
    func report(_ message: String, at table: TableNode) {
        report(message, at: table.source, .value, human: table.human)
    }

    func mismatch(_ node: Node, expected: String) {
        report("expected \(expected), found \(node.value.type.withArticle)", at: node)
    }

    /// Which of two keys of a table is written later, to point at the second of a conflicting pair.
    func later(_ a: String, _ b: String, in table: TableNode) -> String {
        let spanA = index.span(of: table.source.appending(a), .key)
        let spanB = index.span(of: table.source.appending(b), .key)
        guard let spanA, let spanB else { return b }
        return (spanA.line, spanA.column) > (spanB.line, spanB.column) ? a : b
    }

    // MARK: Structure

    /// Unknown keys are errors, with a suggestion when one of the allowed keys is close.
    func checkKeys(of table: TableNode, allowed: [String]) {
        for key in table.table.keys where !allowed.contains(key) {
            report("unknown key \"\(key)\"" + suggestion(key, allowed),
                   at: table.source.appending(key), .key, human: table.human)
        }
    }

    func table(_ node: Node, expected: String = "a table", allowed: [String]) -> TableNode? {
        guard let table = node.value.table else {
            mismatch(node, expected: expected)
            return nil
        }
        let result = TableNode(table: table, source: node.source, human: node.human)
        checkKeys(of: result, allowed: allowed)
        return result
    }

    /// The elements of an array; each keeps the array's human path and gets its own source position.
    func array(_ node: Node, expected: String) -> [Node]? {
        guard let array = node.value.array else {
            mismatch(node, expected: expected)
            return nil
        }
        return array.enumerated().map { i, element in
            Node(value: element, source: node.source.appending(index: i), human: node.human)
        }
    }

    /// The tables of an array of tables, `[[x]]` or `x = [{ ... }, ...]`; other elements are reported.
    func tables(_ node: Node, expected: String) -> [TableElement] {
        guard let items = array(node, expected: expected) else { return [] }
        return items.enumerated().compactMap { i, item in
            guard let table = item.value.table else {
                mismatch(item, expected: "a table")
                return nil
            }
            return TableElement(index: i, table: table, source: item.source)
        }
    }

    // MARK: Scalars

    func string(_ node: Node) -> String? {
        guard let s = node.value.string else {
            mismatch(node, expected: "a string")
            return nil
        }
        return s
    }

    func bool(_ node: Node) -> Bool? {
        guard let b = node.value.bool else {
            mismatch(node, expected: "true or false")
            return nil
        }
        return b
    }

    /// Out of range, the message names the range: "expected an integer from 1 to 31, found 40".
    func integer(_ node: Node, in range: ClosedRange<Int>) -> Int? {
        guard let n = node.value.int else {
            mismatch(node, expected: "an integer")
            return nil
        }
        guard range.contains(n) else {
            let wanted = range.lowerBound == 0 && (n < 0 || range.upperBound == .max)
                ? "a non-negative integer"
                : "an integer from \(range.lowerBound) to \(range.upperBound)"
            report("expected \(wanted), found \(n)", at: node)
            return nil
        }
        return n
    }

    /// One of a fixed set of strings, with a suggestion for a near miss.
    func choice(_ node: Node, among names: [String], expected: String? = nil) -> String? {
        let expected = expected ?? quotedList(names)
        guard let s = node.value.string else {
            mismatch(node, expected: expected)
            return nil
        }
        guard names.contains(s) else {
            report("expected \(expected), found \"\(s)\"" + suggestion(s, names), at: node)
            return nil
        }
        return s
    }

    func choice<T: RawRepresentable & CaseIterable>(_ node: Node, of _: T.Type) -> T? where T.RawValue == String {
        choice(node, among: T.allCases.map(\.rawValue)).flatMap(T.init(rawValue:))
    }
}

/// `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
func quotedList(_ words: [String]) -> String {
    let quoted = words.map { "\"\($0)\"" }
    guard quoted.count > 1 else { return quoted.first ?? "" }
    return quoted.dropLast().joined(separator: ", ") + " or " + quoted.last!
}

extension TOMLType {
    var withArticle: String {
        switch self {
        case .table: return "a table"
        case .array: return "an array"
        case .string: return "a string"
        case .int: return "an integer"
        case .double: return "a floating-point number"
        case .bool: return "a boolean"
        case .date: return "a date"
        case .time: return "a time"
        case .dateTime: return "a date-time"
        }
    }
}
