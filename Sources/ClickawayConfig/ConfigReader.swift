internal import ClickawayCore
internal import ClickawayTOML

/// A value from the document, with its path in human form (to name it in a message).
struct Node {
    let value: TOMLValue
    /// The path of the table it is in and its key there: the whole path is made only when a
    /// message needs it (most values never do).
    let parent: ModelPath
    let key: String?

    var human: ModelPath { key.map { parent.appending(.key($0)) } ?? parent }
}

/// A table from the document, with its path in human form.
struct TableNode {
    let value: TOMLValue
    let human: ModelPath

    subscript(key: String) -> Node? {
        value[key].map { Node(value: $0, parent: human, key: key) }
    }

    var isEmpty: Bool { value.count == 0 }
}

/// One table of an array of tables, with its position in the array.
struct TableElement {
    let index: Int
    let table: TOMLValue
}

/// Reads typed values out of one file's TOML. Every problem becomes a diagnostic and reading
/// goes on, so one run reports everything (up to `maxDiagnostics`, then a count); a reader
/// returns nil for a value it could not use.
final class ConfigReader {
    /// Past this many, errors in one file are counted, not shown: a file of ten thousand
    /// broken popups gets a readable report, in memory that does not grow with the file.
    static let maxDiagnostics = 100

    let file: String
    private let lines: SourceLines
    private(set) var diagnostics: [Diagnostic] = []
    private(set) var omitted = 0

    init(file: String, lines: SourceLines) {
        self.file = file
        self.lines = lines
    }

    // MARK: Reporting

    /// Past the cap, the message and the path are not even made: counting is all that is left.
    func report(_ message: @autoclosure () -> String, at span: SourceSpan?, human: @autoclosure () -> ModelPath) {
        guard diagnostics.count < Self.maxDiagnostics else {
            omitted += 1
            return
        }
        diagnostics.append(Diagnostic(file: file, span: span, lines: lines, path: human().description, message: message()))
    }

    /// A problem with a value: the caret goes under the value.
    func report(_ message: @autoclosure () -> String, at node: Node) {
        report(message(), at: node.value.span, human: node.human)
    }

    /// A problem with a table as a whole (a missing key): the caret goes under its header or opening brace.
    func report(_ message: @autoclosure () -> String, at table: TableNode) {
        report(message(), at: table.value.span, human: table.human)
    }

    /// A problem with a key: the caret goes under the key's name.
    func report(_ message: @autoclosure () -> String, atKeyOf value: TOMLValue, human: @autoclosure () -> ModelPath) {
        report(message(), at: value.keySpan ?? value.span, human: human())
    }

    func mismatch(_ node: Node, expected: String) {
        report("expected \(expected), found \(node.value.kind.withArticle)", at: node)
    }

    /// Which of two keys of a table is written later, to point at the second of a conflicting pair.
    func later(_ a: String, _ b: String, in table: TableNode) -> TOMLValue? {
        guard let valueA = table.value[a], let valueB = table.value[b] else { return table.value[b] ?? table.value[a] }
        guard let spanA = valueA.keySpan, let spanB = valueB.keySpan else { return valueB }
        return spanA > spanB ? valueA : valueB
    }

    // MARK: Structure

    /// Unknown keys are errors, with a suggestion when one of the allowed keys is close.
    func checkKeys(of table: TableNode, allowed: [String]) {
        for entry in table.value.entries(notIn: allowed) {
            let key = entry.key ?? ""
            report("unknown key \"\(key)\"" + suggestion(key, allowed), atKeyOf: entry, human: table.human)
        }
    }

    func table(_ node: Node, expected: String = "a table", allowed: [String]) -> TableNode? {
        guard node.value.isTable else {
            mismatch(node, expected: expected)
            return nil
        }
        let result = TableNode(value: node.value, human: node.human)
        checkKeys(of: result, allowed: allowed)
        return result
    }

    /// The elements of an array (`element(_:of:)` makes one a node, for a message).
    func array(_ node: Node, expected: String) -> [TOMLValue]? {
        guard node.value.isArray else {
            mismatch(node, expected: expected)
            return nil
        }
        return node.value.elements
    }

    /// An element of the array at `node`: it is named by the array's path.
    func element(_ value: TOMLValue, of node: Node) -> Node {
        Node(value: value, parent: node.parent, key: node.key)
    }

    /// The tables of an array of tables, `[[x]]` or `x = [{ ... }, ...]`; other elements are reported.
    func tables(_ node: Node, expected: String) -> [TableElement] {
        guard let items = array(node, expected: expected) else { return [] }
        return items.enumerated().compactMap { i, item in
            guard item.isTable else {
                mismatch(element(item, of: node), expected: "a table")
                return nil
            }
            return TableElement(index: i, table: item)
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
        guard let n = node.value.integer.map(Int.init) else {
            mismatch(node, expected: "an integer")
            return nil
        }
        guard range.contains(n) else {
            let wanted = range.upperBound == .max ? "an integer of at least \(range.lowerBound)"
                : "an integer from \(range.lowerBound) to \(range.upperBound)"
            report("expected \(wanted), found \(n)", at: node)
            return nil
        }
        return n
    }

    /// `integer(_:in:)` for an element of the array at `node`.
    func integer(_ value: TOMLValue, of node: Node, in range: ClosedRange<Int>) -> Int? {
        if let n = value.integer, range.contains(Int(n)) { return Int(n) }
        return integer(element(value, of: node), in: range)
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
