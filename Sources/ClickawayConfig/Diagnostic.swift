/// One error in a configuration file, rendered the way i3 and Cargo do:
///
/// ```
/// /path/to/config.toml:12:12: error: popup "calendar" → window: unknown key "clss"; did you mean "class"?
///    12 | window = { clss = "eww-calendar" }
///       |            ^^^^
/// ```
public struct Diagnostic: Hashable, Sendable, CustomStringConvertible {
    public let file: String
    /// 1-based; nil when the error is about the file as a whole.
    public let line: Int?
    /// 1-based, in Unicode scalars.
    public let column: Int?
    /// How many carets go under the source line.
    public let length: Int
    /// The line the error is on, quoted under the message.
    public let sourceLine: String?
    /// The key path in human form: `popup "calendar" → region "card" → rect`; empty at the top level.
    public let path: String
    public let message: String

    public init(file: String, line: Int? = nil, column: Int? = nil, length: Int = 1,
                sourceLine: String? = nil, path: String = "", message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.length = max(1, length)
        self.sourceLine = sourceLine
        self.path = path
        self.message = message
    }

    init(file: String, span: SourceSpan?, lines: SourceLines, path: String, message: String) {
        self.init(file: file, line: span?.line, column: span?.column, length: span?.length ?? 1,
                  sourceLine: span.flatMap { lines[$0.line] }, path: path, message: message)
    }

    public var rendered: String {
        var location = file
        if let line {
            location += ":\(line)"
            if let column { location += ":\(column)" }
        }
        var text = "\(location): error: " + (path.isEmpty ? "" : "\(path): ") + message
        if let line, let sourceLine {
            let number = String(line)
            let gutter = String(repeating: " ", count: max(0, 5 - number.count)) + number
            let blank = String(repeating: " ", count: gutter.count)
            text += "\n\(gutter) | \(sourceLine)"
            if let column {
                text += "\n\(blank) | " + Diagnostic.caretIndent(sourceLine, column: column)
                    + String(repeating: "^", count: length)
            }
        }
        return text
    }

    public var description: String { rendered }

    /// Every diagnostic, separated by blank lines.
    public static func render(_ diagnostics: [Diagnostic]) -> String {
        diagnostics.map(\.rendered).joined(separator: "\n\n")
    }

    /// Blanks up to the column, keeping tabs so the caret lines up under tab-indented text.
    private static func caretIndent(_ line: String, column: Int) -> String {
        var indent = String.UnicodeScalarView()
        var scalars = line.unicodeScalars.makeIterator()
        for _ in 1..<max(1, column) {
            indent.append(scalars.next() == "\t" ? "\t" : " ")
        }
        return String(indent)
    }
}

/// A file's lines, for quoting under a diagnostic.
struct SourceLines: Sendable {
    private let lines: [Substring.UnicodeScalarView]

    init(_ text: String) {
        // By scalars: as Characters, "\r\n" is one unit and would not split on "\n".
        lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
    }

    /// Line `n` (1-based) without its line break; "" just past the end, where toml++ reports a missing end.
    subscript(n: Int) -> String? {
        if n == lines.count + 1 { return "" }
        guard n >= 1, n <= lines.count else { return nil }
        let line = lines[n - 1]
        return String(Substring(line.last == "\r" ? line.dropLast() : line))
    }
}
