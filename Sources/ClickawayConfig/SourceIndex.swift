/// A key's place in a TOML document: `popup[2].region[0].rect`.
/// Arrays, inline or `[[...]]`, contribute an index per element.
struct TOMLPath: Hashable, Sendable, CustomStringConvertible {
    enum Component: Hashable, Sendable {
        case key(String)
        case index(Int)
    }

    var components: [Component] = []

    static let root = TOMLPath()

    func appending(_ key: String) -> TOMLPath { TOMLPath(components: components + [.key(key)]) }
    func appending(index: Int) -> TOMLPath { TOMLPath(components: components + [.index(index)]) }

    var parent: TOMLPath? {
        components.isEmpty ? nil : TOMLPath(components: components.dropLast())
    }

    /// The `[[header]]` that creates elements of the array at this path: `popup.region`.
    var headerName: String {
        components.compactMap { component -> String? in
            if case .key(let k) = component { return TOMLPath.quotedIfNeeded(k) }
            return nil
        }.joined(separator: ".")
    }

    var description: String {
        var text = ""
        for component in components {
            switch component {
            case .key(let k): text += (text.isEmpty ? "" : ".") + TOMLPath.quotedIfNeeded(k)
            case .index(let i): text += "[\(i)]"
            }
        }
        return text
    }

    private static func quotedIfNeeded(_ key: String) -> String {
        let bare = !key.isEmpty && key.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "-"
        }
        return bare ? key : "\"\(key)\""
    }
}

/// A run of characters on one line; line and column are 1-based, counted in Unicode scalars like toml++.
struct SourceSpan: Hashable, Sendable {
    var line: Int
    var column: Int
    var length: Int
}

/// Where each key and value of a TOML document is written. TOMLKit keeps no source positions,
/// so this tolerant scanner re-reads the text (already accepted by TOMLKit) to find them.
struct SourceIndex: Sendable {
    enum Token {
        /// The key's name (for a `[table]` header, the last key in it).
        case key
        /// The value (for a `[table]` header, the whole header; for an array, its opening
        /// line, or the whole array when it fits on one).
        case value
    }

    struct Entry: Hashable, Sendable {
        var key: SourceSpan?
        var value: SourceSpan?
    }

    /// A syntax error toml++ 3 does not report but asserts on (aborting the process, or undefined
    /// behaviour without assertions): a header key starting with a character no key can start with
    /// (`[[[a]]]`, `[=]`), or a `}` where an array expects a value (`[1, }`).
    struct ParserTrap: Sendable {
        var position: SourceSpan
        /// Where the statement containing it starts, in Unicode scalars from the start of the text:
        /// toml++ reaches the trap only if everything before that parses.
        var statementOffset: Int
        /// What toml++ would say, in its words.
        var message: String
    }

    private(set) var entries: [TOMLPath: Entry]
    let firstParserTrap: ParserTrap?

    init(text: String) {
        var scanner = Scanner(text: text)
        scanner.scanDocument()
        entries = scanner.entries
        firstParserTrap = scanner.firstParserTrap
    }

    /// The span of `token` at `path`, or of the nearest enclosing key that was written down.
    func span(of path: TOMLPath, _ token: Token) -> SourceSpan? {
        var current: TOMLPath? = path
        while let p = current {
            if let entry = entries[p] {
                switch token {
                case .key: if let s = entry.key ?? entry.value { return s }
                case .value: if let s = entry.value ?? entry.key { return s }
                }
            }
            current = p.parent
        }
        return nil
    }
}

private struct Scanner {
    let chars: [Unicode.Scalar]
    var pos = 0
    var line = 1
    var column = 1
    var entries: [TOMLPath: SourceIndex.Entry] = [:]
    /// How many `[[...]]` elements each array of tables has so far, keyed by the array's resolved path.
    var arrayOfTablesCounts: [TOMLPath: Int] = [:]
    var currentTable = TOMLPath.root
    var statementStart = 0
    var firstParserTrap: SourceIndex.ParserTrap?

    init(text: String) {
        chars = Array(text.unicodeScalars)
    }

    var peek: Unicode.Scalar? { pos < chars.count ? chars[pos] : nil }

    mutating func advance() {
        guard pos < chars.count else { return }
        if chars[pos] == "\n" {
            line += 1
            column = 1
        } else {
            column += 1
        }
        pos += 1
    }

    mutating func advance(_ n: Int) {
        for _ in 0..<n { advance() }
    }

    func startsWith(_ s: String) -> Bool {
        var i = pos
        for c in s.unicodeScalars {
            guard i < chars.count, chars[i] == c else { return false }
            i += 1
        }
        return true
    }

    // MARK: Recording

    /// Explicit definitions (a key = value, a header) replace what an implicit mention recorded.
    mutating func define(_ path: TOMLPath, key: SourceSpan?, value: SourceSpan?) {
        entries[path] = SourceIndex.Entry(key: key, value: value)
    }

    /// A table mentioned on the way to a deeper key (`[a.b]`, `a.b = 1`) keeps its first mention.
    mutating func mention(_ path: TOMLPath, key: SourceSpan) {
        if entries[path] == nil { entries[path] = SourceIndex.Entry(key: key, value: nil) }
    }

    func span(from start: (line: Int, column: Int)) -> SourceSpan {
        let length = line == start.line ? column - start.column : 1
        return SourceSpan(line: start.line, column: start.column, length: max(1, length))
    }

    mutating func trap(_ message: String) {
        guard firstParserTrap == nil else { return }
        firstParserTrap = SourceIndex.ParserTrap(position: SourceSpan(line: line, column: column, length: 1),
                                                 statementOffset: statementStart, message: message)
    }

    /// A character as toml++ quotes it in messages.
    static func shown(_ c: Unicode.Scalar) -> String {
        ["\n": "\\n", "\r": "\\r", "\t": "\\t"][c] ?? String(c)
    }

    // MARK: Trivia

    /// Skips blanks within the line; returns whether there were any.
    @discardableResult
    mutating func skipSpaces() -> Bool {
        let before = pos
        while let c = peek, c == " " || c == "\t" || c == "\u{FEFF}" { advance() }
        return pos > before
    }

    mutating func skipTrivia() {
        while let c = peek {
            if c == " " || c == "\t" || c == "\n" || c == "\r" || c == "\u{FEFF}" {
                advance()
            } else if c == "#" {
                while let d = peek, d != "\n" { advance() }
            } else {
                return
            }
        }
    }

    // MARK: Document structure

    mutating func scanDocument() {
        while true {
            skipTrivia()
            guard let c = peek else { return }
            let before = pos
            statementStart = pos
            if c == "[" {
                scanHeader()
            } else {
                scanKeyValue(in: currentTable)
            }
            // Forgiving: whatever could not be understood is skipped, one character at a time.
            if pos == before { advance() }
        }
    }

    mutating func scanHeader() {
        let start = (line, column)
        advance()
        let spaced = skipSpaces()
        let isArray = peek == "["
        if isArray {
            advance()
            skipSpaces()
        }
        // toml++ reports `[ [` itself; any other character no key can start with makes it assert.
        if !(isArray && spaced), let c = peek, !Scanner.canStartHeaderKey(c) {
            trap("Error while parsing key: expected bare key starting character or string delimiter, saw '\(Scanner.shown(c))'")
        }
        let keys = scanKey()
        skipSpaces()
        if peek == "]" { advance() }
        if isArray, peek == "]" { advance() }
        let header = span(from: start)
        guard let last = keys.last else { return }

        var path = TOMLPath.root
        for k in keys.dropLast() {
            path = path.appending(k.name)
            mention(path, key: k.span)
            if let count = arrayOfTablesCounts[path] { path = path.appending(index: count - 1) }
        }
        path = path.appending(last.name)
        if isArray {
            mention(path, key: last.span)
            let count = arrayOfTablesCounts[path, default: 0]
            arrayOfTablesCounts[path] = count + 1
            path = path.appending(index: count)
        }
        define(path, key: last.span, value: header)
        currentTable = path
    }

    mutating func scanKeyValue(in table: TOMLPath) {
        let keys = scanKey()
        guard let last = keys.last else { return }
        var path = table
        for k in keys.dropLast() {
            path = path.appending(k.name)
            mention(path, key: k.span)
        }
        path = path.appending(last.name)
        skipSpaces()
        if peek == "=" { advance() }
        skipSpaces()
        let value = scanValue(at: path)
        define(path, key: last.span, value: value)
    }

    /// A dotted key: `a`, `a.b`, `"quoted key".c`, `'literal'`.
    mutating func scanKey() -> [(name: String, span: SourceSpan)] {
        var keys: [(name: String, span: SourceSpan)] = []
        while true {
            skipSpaces()
            let start = (line, column)
            let name: String
            if peek == "\"" || peek == "'" {
                name = scanString()
            } else {
                var bare = String.UnicodeScalarView()
                while let c = peek, !Scanner.keyTerminators.contains(c) {
                    bare.append(c)
                    advance()
                }
                if bare.isEmpty { return keys }
                name = String(bare)
            }
            keys.append((name, span(from: start)))
            skipSpaces()
            guard peek == "." else { return keys }
            advance()
        }
    }

    static let keyTerminators: Set<Unicode.Scalar> = [
        " ", "\t", "\n", "\r", "=", ".", "[", "]", "{", "}", "\"", "'", "#", ",",
    ]

    static func canStartHeaderKey(_ c: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c)
            || c == "_" || c == "-" || c == "\"" || c == "'" || c == "]"
    }

    static let valueTerminators: Set<Unicode.Scalar> = [" ", "\t", "\n", "\r", ",", "]", "}", "#"]

    // MARK: Values

    mutating func scanValue(at path: TOMLPath) -> SourceSpan? {
        let start = (line, column)
        switch peek {
        case nil:
            return nil
        case "\"", "'":
            _ = scanString()
        case "[":
            scanArray(at: path)
        case "{":
            scanInlineTable(at: path)
        default:
            while let c = peek, !Scanner.valueTerminators.contains(c) { advance() }
        }
        return span(from: start)
    }

    mutating func scanArray(at path: TOMLPath) {
        advance()
        var index = 0
        while true {
            skipTrivia()
            guard let c = peek else { return }
            if c == "]" {
                advance()
                return
            }
            if c == "}" { trap("Error while parsing array: expected value or closing ']', saw '}'") }
            let before = pos
            if c != "," {
                let element = path.appending(index: index)
                define(element, key: nil, value: scanValue(at: element))
                index += 1
            }
            skipTrivia()
            if peek == "," { advance() }
            if pos == before { advance() }
        }
    }

    mutating func scanInlineTable(at path: TOMLPath) {
        advance()
        while true {
            skipTrivia()
            guard let c = peek else { return }
            if c == "}" {
                advance()
                return
            }
            let before = pos
            scanKeyValue(in: path)
            skipTrivia()
            if peek == "," { advance() }
            if pos == before { advance() }
        }
    }

    /// Any of the four string forms; returns the text with escapes resolved (keys need it).
    mutating func scanString() -> String {
        guard let quote = peek else { return "" }
        let isBasic = quote == "\""
        let multiLine = startsWith(isBasic ? "\"\"\"" : "'''")
        advance(multiLine ? 3 : 1)
        var text = String.UnicodeScalarView()
        while let c = peek {
            if multiLine ? startsWith(isBasic ? "\"\"\"" : "'''") : c == quote {
                advance(multiLine ? 3 : 1)
                // Up to two quotes may sit right before the closing three: `"""a""""`.
                if multiLine {
                    for _ in 0..<2 where peek == quote { advance() }
                }
                break
            }
            if !multiLine && c == "\n" { break }
            if isBasic && c == "\\" {
                advance()
                text.append(contentsOf: scanEscape().unicodeScalars)
                continue
            }
            text.append(c)
            advance()
        }
        return String(text)
    }

    /// After a backslash in a basic string.
    mutating func scanEscape() -> String {
        guard let c = peek else { return "" }
        advance()
        switch c {
        case "n": return "\n"
        case "t": return "\t"
        case "r": return "\r"
        case "b": return "\u{8}"
        case "f": return "\u{C}"
        case "e": return "\u{1B}"
        case "u", "U":
            var hex = ""
            for _ in 0..<(c == "u" ? 4 : 8) {
                guard let h = peek, h.properties.isASCIIHexDigit else { break }
                hex.unicodeScalars.append(h)
                advance()
            }
            return UInt32(hex, radix: 16).flatMap(Unicode.Scalar.init).map { String($0) } ?? ""
        case " ", "\t", "\r", "\n":
            // Line-ending backslash in a multi-line string: the line break and following blanks vanish.
            while let w = peek, w == " " || w == "\t" || w == "\r" || w == "\n" { advance() }
            return ""
        default:
            return String(c)
        }
    }
}
