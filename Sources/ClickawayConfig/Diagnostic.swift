internal import ClickawayTOML

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
    /// Where the caret goes in `sourceLine` when that is an excerpt of a long line.
    let caretColumn: Int?

    public init(file: String, line: Int? = nil, column: Int? = nil, length: Int = 1,
                sourceLine: String? = nil, path: String = "", message: String) {
        self.init(file: file, line: line, column: column, length: length, sourceLine: sourceLine, caretColumn: nil,
                  path: path, message: message)
    }

    private init(file: String, line: Int?, column: Int?, length: Int, sourceLine: String?, caretColumn: Int?,
                 path: String, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.length = max(1, length)
        self.sourceLine = sourceLine
        self.caretColumn = caretColumn
        self.path = path
        self.message = message
    }

    init(file: String, span: SourceSpan?, lines: SourceLines, path: String, message: String) {
        let excerpt = span.flatMap { lines.excerpt(line: $0.line, column: $0.column) }
        let length = min(span?.length ?? 1, SourceLines.excerptWidth)
        self.init(file: file, line: span?.line, column: span?.column, length: length, sourceLine: excerpt?.text,
                  caretColumn: excerpt?.column, path: path, message: message)
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
            if let column = caretColumn ?? column {
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

/// A file's lines, for quoting under a diagnostic; found only once a diagnostic needs one.
final class SourceLines {
    /// Lines longer than this many scalars are quoted as an excerpt around the column.
    static let excerptWidth = 160

    private let bytes: [UInt8]
    private lazy var starts: [Int] = {
        var starts = [bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0]
        for (i, b) in bytes.enumerated() where b == UInt8(ascii: "\n") { starts.append(i + 1) }
        return starts
    }()

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Line `n` (1-based) without its line break, or nil past the end.
    subscript(n: Int) -> String? {
        guard n >= 1, n <= starts.count else { return nil }
        var end = n < starts.count ? starts[n] - 1 : bytes.count
        if end > starts[n - 1] && bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        return String(decoding: bytes[starts[n - 1]..<max(starts[n - 1], end)], as: UTF8.self)
    }

    /// The last long line quoted: many errors on one long line decode it once.
    private var longLine: (number: Int, scalars: [Unicode.Scalar])?

    /// Line `n`, or the part of it around `column` when it is long, and where the column falls in it.
    func excerpt(line n: Int, column: Int) -> (text: String, column: Int)? {
        if longLine?.number != n {
            guard let line = self[n] else { return nil }
            guard line.utf8.count > Self.excerptWidth else { return (line, column) }
            longLine = (n, Array(line.unicodeScalars))
        }
        let scalars = longLine!.scalars
        guard scalars.count > Self.excerptWidth else {
            var text = String.UnicodeScalarView()
            text.append(contentsOf: scalars)
            return (String(text), column)
        }
        let first = max(0, min(column - 1 - Self.excerptWidth / 2, scalars.count - Self.excerptWidth))
        let end = first + Self.excerptWidth
        var text = String.UnicodeScalarView()
        text.append(contentsOf: scalars[first..<end])
        let prefix = first > 0 ? "…" : "", suffix = end < scalars.count ? "…" : ""
        return (prefix + String(text) + suffix, column - first + (prefix.isEmpty ? 0 : 1))
    }
}
