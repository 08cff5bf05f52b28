/// TOML 1.0 (https://toml.io/en/v1.0.0) in one pass over UTF-8 bytes, building the document
/// as it goes. Values nest by recursion, bounded by `TOMLLimits.maxDepth`; everything else is
/// loops. Each key is looked up once per mention (a scan of a small table, a hash in a large
/// one), so time and memory are linear in the text.
struct Parser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let end: Int
    private let limits: TOMLLimits
    private var pos = 0
    private var position: LinePosition
    private(set) var storage = Storage()
    /// The table the last header opened, and its depth.
    private var current: Int32 = 0
    private var currentDepth = 0
    /// Reused for strings with escapes.
    private var scratch: [UInt8] = []

    init(_ bytes: UnsafeBufferPointer<UInt8>, limits: TOMLLimits) {
        self.bytes = bytes
        end = bytes.count
        self.limits = limits
        position = LinePosition(bytes)
    }

    // MARK: - Positions and errors

    private struct Mark {
        var line: Int
        var column: Int
    }

    private mutating func mark() -> Mark { Mark(line: position.line, column: position.column(at: pos)) }

    /// From `start` to here; on a later line, just the first character.
    private mutating func span(from start: Mark) -> SourceSpan {
        let length = position.line == start.line ? position.column(at: pos) - start.column : 1
        return SourceSpan(line: start.line, column: start.column, length: length)
    }

    private mutating func error(_ message: String, at offset: Int? = nil) -> TOMLError {
        TOMLError(span: SourceSpan(line: position.line, column: position.column(at: offset ?? pos)), message: message)
    }

    private func byte(_ offset: Int) -> UInt8 { offset < end ? bytes[offset] : 0 }

    private var atEnd: Bool { pos >= end }

    /// What is at `offset`, as a message says it was found.
    private func found(_ offset: Int) -> String {
        guard offset < end else { return "the end of the file" }
        let b = bytes[offset]
        if b == UInt8(ascii: "\n") || (b == UInt8(ascii: "\r") && byte(offset + 1) == UInt8(ascii: "\n")) {
            return "the end of the line"
        }
        switch b {
        case UInt8(ascii: " "): return "a space"
        case UInt8(ascii: "\t"): return "a tab"
        case UInt8(ascii: "\r"): return "a carriage return (U+000D) without a line feed after it"
        case 0: return "a NUL byte (U+0000); is this a text file?"
        case UInt8(ascii: "'"): return "\"'\""
        default: break
        }
        let scalar = UTF8Check.scalar(at: offset, in: bytes)
        let code = Self.codePoint(scalar)
        if scalar.isASCII {
            return scalar.value < 0x20 || scalar.value == 0x7F ? "the control character \(code)" : "'\(Character(scalar))'"
        }
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .spaceSeparator, .nonspacingMark,
             .enclosingMark, .spacingMark, .unassigned, .privateUse, .surrogate:
            return "the invisible character \(code)"
        default:
            return "'\(Character(scalar))' (\(code))"
        }
    }

    /// `U+00E9`.
    static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    // MARK: - Document

    mutating func parseDocument(pause: () -> Void = {}) throws(TOMLError) {
        // Room for what a text of this size can hold (a configuration has a node every 7
        // bytes or so): the arrays grow without copying, and unused room is never touched.
        storage.nodes.reserveCapacity(end / 6 + 16)
        storage.keys.reserveCapacity(end / 10 + 16)
        storage.containers.reserveCapacity(end / 24 + 16)
        storage.nodes.append(Node(kind: .table, line: 1, column: 1, length: 1, payload: 0))
        storage.containers.append([])
        if end >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF {
            pos = 3
            position.skipFirst(3)
        }
        while true {
            pause()
            skipSpaces()
            guard !atEnd else { return }
            switch bytes[pos] {
            case UInt8(ascii: "#"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                try endOfLine(after: nil)
            case UInt8(ascii: "["):
                try parseHeader()
                try endOfLine(after: "the table header")
            default:
                try parseKeyValue(in: current, depth: currentDepth)
                try endOfLine(after: "the value")
            }
        }
    }

    /// Blanks, an optional comment, then a line break or the end of the file.
    private mutating func endOfLine(after what: String?) throws(TOMLError) {
        skipSpaces()
        if byte(pos) == UInt8(ascii: "#") { try skipComment() }
        guard !atEnd else { return }
        if try takeLineBreak() { return }
        if let what {
            throw error("expected the end of the line after \(what), found \(found(pos))")
        }
        throw error("expected a key, a [table] header or a comment, found \(found(pos))")
    }

    private mutating func skipSpaces() {
        while pos < end, bytes[pos] == UInt8(ascii: " ") || bytes[pos] == UInt8(ascii: "\t") { pos += 1 }
    }

    /// Takes `\n` or `\r\n`; false if neither is here. A lone `\r` is an error.
    private mutating func takeLineBreak() throws(TOMLError) -> Bool {
        switch byte(pos) {
        case UInt8(ascii: "\n"):
            pos += 1
        case UInt8(ascii: "\r") where pos < end:
            guard byte(pos + 1) == UInt8(ascii: "\n") else {
                throw error("found a carriage return (U+000D) without a line feed after it; lines end with \\n or \\r\\n")
            }
            pos += 2
        default:
            return false
        }
        position.newLine(startingAt: pos)
        return true
    }

    /// From `#` to the end of the line, which is left in place.
    private mutating func skipComment() throws(TOMLError) {
        pos += 1
        while pos < end {
            let b = bytes[pos]
            if b == UInt8(ascii: "\n") { return }
            if b == UInt8(ascii: "\r") {
                if byte(pos + 1) == UInt8(ascii: "\n") { return }
                throw error("found a carriage return (U+000D) without a line feed after it in a comment")
            }
            if (b < 0x20 && b != UInt8(ascii: "\t")) || b == 0x7F {
                throw error("found \(found(pos)) in a comment; comments may not contain control characters")
            }
            pos += 1
        }
    }

    /// Blanks, line breaks and comments between array elements.
    private mutating func skipBlankLines() throws(TOMLError) {
        while true {
            skipSpaces()
            if byte(pos) == UInt8(ascii: "#") { try skipComment() }
            if atEnd { return }
            if try !takeLineBreak() { return }
        }
    }

    // MARK: - Keys

    private struct KeyPart {
        var name: String
        var span: SourceSpan
    }

    private static func isBareKeyByte(_ b: UInt8) -> Bool {
        (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
            || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: "_") || b == UInt8(ascii: "-")
    }

    /// `a`, `a.b`, `"quoted key".c`, `'literal'.d`, with blanks around the dots. At most
    /// `maxDepth` parts: each one is a level of nesting.
    private mutating func parseKey() throws(TOMLError) -> [KeyPart] {
        var parts: [KeyPart] = []
        while true {
            skipSpaces()
            let start = mark()
            let name: String
            let b = byte(pos)
            if b == UInt8(ascii: "\"") || b == UInt8(ascii: "'") {
                if byte(pos + 1) == b && byte(pos + 2) == b {
                    throw error("a key cannot be a multi-line string")
                }
                name = b == UInt8(ascii: "\"") ? try parseBasicString() : try parseLiteralString()
            } else if pos < end && Self.isBareKeyByte(b) {
                let first = pos
                while pos < end && Self.isBareKeyByte(bytes[pos]) { pos += 1 }
                name = String(decoding: UnsafeBufferPointer(rebasing: bytes[first..<pos]), as: UTF8.self)
            } else if parts.isEmpty {
                throw error("expected a key, found \(found(pos))")
            } else {
                throw error("expected a key after '.', found \(found(pos))")
            }
            parts.append(KeyPart(name: name, span: span(from: start)))
            guard parts.count <= limits.maxDepth else {
                throw TOMLError(span: parts.last!.span, message: "a key may have at most \(limits.maxDepth) dotted parts")
            }
            skipSpaces()
            guard byte(pos) == UInt8(ascii: "."), pos < end else { return parts }
            pos += 1
        }
    }

    /// `a.b."c d"`, for messages.
    private static func dotted(_ parts: ArraySlice<KeyPart>) -> String {
        parts.map { part in
            !part.name.isEmpty && part.name.utf8.allSatisfy(isBareKeyByte) ? part.name : "\"" + part.name + "\""
        }.joined(separator: ".")
    }

    // MARK: - Tables

    /// `[a.b]` or `[[a.b]]`: opens the table the following keys go in.
    private mutating func parseHeader() throws(TOMLError) {
        let start = mark()
        pos += 1
        let isArray = byte(pos) == UInt8(ascii: "[")
        if isArray { pos += 1 }
        let parts = try parseKey()
        let close = isArray ? "']]'" : "']'"
        guard byte(pos) == UInt8(ascii: "]"), pos < end else {
            throw error("expected \(close) to close the \(isArray ? "array-of-tables " : "table ")header, found \(found(pos))")
        }
        pos += 1
        if isArray {
            guard byte(pos) == UInt8(ascii: "]"), pos < end else {
                throw error("expected \(close) to close the array-of-tables header, found \(found(pos))")
            }
            pos += 1
        }
        let header = span(from: start)

        var table: Int32 = 0
        var depth = 0
        for (i, part) in parts.dropLast().enumerated() {
            depth += 1
            try checkDepth(depth, at: part.span)
            guard let child = child(of: table, named: part.name) else {
                table = newTable(flags: [], span: part.span, key: part, in: table)
                continue
            }
            let node = storage.nodes[Int(child)]
            var name: String { Self.dotted(parts[...i]) }
            switch node.kind {
            case .table where node.flags.contains(.inline):
                throw TOMLError(span: part.span, message: "cannot add to \(name): it is an inline table (line \(node.line)), "
                                + "complete where it is written")
            case .table:
                table = child
            case .array where node.flags.contains(.tableArray):
                // `[a.b]` after `[[a]]` is in a's latest element.
                table = storage.containers[Int(node.payload)].last!
                depth += 1
            case .array:
                throw TOMLError(span: part.span, message: "cannot add to \(name): it is an array value (line \(node.line)); "
                                + "only arrays made with [[\(name)]] take tables from headers")
            default:
                throw TOMLError(span: part.span, message: "cannot use \(name) as a table: it is already \(node.kind.withArticle) "
                                + "(line \(node.line))")
            }
        }
        let last = parts[parts.count - 1]
        var name: String { Self.dotted(parts[...]) }
        depth += 1
        try checkDepth(isArray ? depth + 1 : depth, at: last.span)
        let existing = child(of: table, named: last.name)
        if isArray {
            var array: Int32
            if let existing {
                let node = storage.nodes[Int(existing)]
                guard node.kind == .array && node.flags.contains(.tableArray) else {
                    let what = node.kind == .array ? "an array value" : node.kind.withArticle
                    throw TOMLError(span: header, message: "cannot append to \(name) with [[\(name)]]: it is \(what) "
                                    + "(line \(node.line)), not an array of tables")
                }
                array = existing
            } else {
                array = newContainer(.array, flags: .tableArray, span: header)
                insert(array, key: last, into: table)
            }
            let element = newTable(flags: .header, span: header, key: nil, in: nil)
            storage.containers[Int(storage.nodes[Int(array)].payload)].append(element)
            current = element
            currentDepth = depth + 1
            return
        }
        if let existing {
            let node = storage.nodes[Int(existing)]
            guard node.kind == .table, node.flags.isEmpty else {
                let how = node.kind != .table ? "is already \(node.kind == .array && node.flags.contains(.tableArray) ? "an array of tables" : node.kind.withArticle)"
                    : node.flags.contains(.header) ? "is already defined"
                    : node.flags.contains(.dotted) ? "is already defined by dotted keys" : "is already an inline table"
                throw TOMLError(span: header, message: "table [\(name)] \(how) (line \(node.line)); a table is defined once")
            }
            // A table so far only implied by deeper headers gets its own header's position.
            storage.nodes[Int(existing)].flags = .header
            storage.nodes[Int(existing)].span = header
            storage.keys[Int(storage.nodes[Int(existing)].key)].span = last.span
            current = existing
        } else {
            current = newTable(flags: .header, span: header, key: last, in: table)
        }
        currentDepth = depth
    }

    private func checkDepth(_ depth: Int, at span: SourceSpan) throws(TOMLError) {
        guard depth <= limits.maxDepth else {
            throw TOMLError(span: span, message: "tables and arrays nest too deep: at most \(limits.maxDepth) levels")
        }
    }

    private func child(of table: Int32, named name: String) -> Int32? {
        storage.child(of: table, named: name)
    }

    // MARK: - Key/value pairs

    /// `key = value` in `table` (at `depth`): dotted keys make or extend tables on the way.
    private mutating func parseKeyValue(in table: Int32, depth: Int) throws(TOMLError) {
        let parts = try parseKey()
        guard byte(pos) == UInt8(ascii: "="), pos < end else {
            throw error("expected '=' after the key \(Self.dotted(parts[...])), found \(found(pos))")
        }
        pos += 1
        skipSpaces()
        var target = table
        var level = depth
        for (i, part) in parts.dropLast().enumerated() {
            level += 1
            try checkDepth(level, at: part.span)
            guard let child = child(of: target, named: part.name) else {
                target = newTable(flags: .dotted, span: part.span, key: part, in: target)
                continue
            }
            let node = storage.nodes[Int(child)]
            var name: String { Self.dotted(parts[...i]) }
            guard node.kind == .table else {
                throw TOMLError(span: part.span, message: "cannot use \(name) as a table: it is already \(node.kind.withArticle) "
                                + "(line \(node.line))")
            }
            if node.flags.contains(.inline) {
                throw TOMLError(span: part.span, message: "cannot add to \(name): it is an inline table (line \(node.line)), "
                                + "complete where it is written")
            }
            if node.flags.contains(.header) {
                throw TOMLError(span: part.span, message: "cannot add to table [\(name)] with dotted keys: it has its own "
                                + "header (line \(node.line)); write the key under that header")
            }
            storage.nodes[Int(child)].flags.insert(.dotted)
            target = child
        }
        let last = parts[parts.count - 1]
        if let existing = child(of: target, named: last.name) {
            let node = storage.nodes[Int(existing)]
            throw TOMLError(span: last.span, message: "duplicate key \(Self.dotted(parts[...])): it is already "
                            + (node.kind == .table ? "a table" : "defined") + " (line \(node.line))")
        }
        let value = try parseValue(depth: level + 1)
        insert(value, key: last, into: target)
    }

    private mutating func newNode(_ kind: TOMLKind, flags: NodeFlags = [], span: SourceSpan, payload: Int64) -> Int32 {
        var node = Node(kind: kind, flags: flags, line: 0, column: 0, length: 0, payload: payload)
        node.span = span
        storage.nodes.append(node)
        return Int32(storage.nodes.count - 1)
    }

    private mutating func newContainer(_ kind: TOMLKind, flags: NodeFlags, span: SourceSpan) -> Int32 {
        storage.containers.append([])
        return newNode(kind, flags: flags, span: span, payload: Int64(storage.containers.count - 1))
    }

    /// A new table; named `key` in `parent` when both are given.
    private mutating func newTable(flags: NodeFlags, span: SourceSpan, key: KeyPart?, in parent: Int32?) -> Int32 {
        let table = newContainer(.table, flags: flags, span: span)
        if let key, let parent { insert(table, key: key, into: parent) }
        return table
    }

    private mutating func insert(_ child: Int32, key: KeyPart, into table: Int32) {
        storage.keys.append(Key(name: key.name, span: key.span))
        storage.nodes[Int(child)].key = Int32(storage.keys.count - 1)
        let container = Int(storage.nodes[Int(table)].payload)
        storage.containers[container].append(child)
        let count = storage.containers[container].count
        // Small tables are searched by a scan; a table that grows past that gets hashed.
        if count > Storage.scanLimit {
            for entry in count == Storage.scanLimit + 1 ? storage.containers[container][...] : [child][...] {
                storage.lookup[TableKey(table: table, name: storage.keys[Int(storage.nodes[Int(entry)].key)].name)] = entry
            }
        }
    }

    // MARK: - Values

    private mutating func parseValue(depth: Int) throws(TOMLError) -> Int32 {
        let start = mark()
        let b = byte(pos)
        guard pos < end else { throw error("expected a value, found the end of the file") }
        switch b {
        case UInt8(ascii: "\""):
            let text = byte(pos + 1) == b && byte(pos + 2) == b ? try parseMultiLineString() : try parseBasicString()
            return string(text, from: start)
        case UInt8(ascii: "'"):
            let text = byte(pos + 1) == b && byte(pos + 2) == b ? try parseMultiLineString() : try parseLiteralString()
            return string(text, from: start)
        case UInt8(ascii: "["):
            try checkDepth(depth, at: SourceSpan(line: start.line, column: start.column))
            return try parseArray(depth: depth, from: start)
        case UInt8(ascii: "{"):
            try checkDepth(depth, at: SourceSpan(line: start.line, column: start.column))
            return try parseInlineTable(depth: depth, from: start)
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"):
            return try parseNumberOrDate(from: start)
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
            let first = pos
            while pos < end && Self.isBareKeyByte(bytes[pos]) { pos += 1 }
            let word = String(decoding: UnsafeBufferPointer(rebasing: bytes[first..<pos]), as: UTF8.self)
            switch word {
            case "true", "false":
                return newNode(.boolean, span: span(from: start), payload: word == "true" ? 1 : 0)
            case "inf":
                return newNode(.float, span: span(from: start), payload: Int64(bitPattern: Double.infinity.bitPattern))
            case "nan":
                return newNode(.float, span: span(from: start), payload: Int64(bitPattern: Double.nan.bitPattern))
            default:
                throw error("expected a value, found '\(word)' (a string needs quotes: \"\(word)\"; "
                            + "booleans are true and false, in lower case)", at: first)
            }
        default:
            throw error("expected a value (a string, number, boolean, date, array or inline table), found \(found(pos))")
        }
    }

    private mutating func string(_ text: String, from start: Mark) -> Int32 {
        storage.strings.append(text)
        return newNode(.string, span: span(from: start), payload: Int64(storage.strings.count - 1))
    }

    /// `[ value, value, ]`, over as many lines as it likes, with comments.
    private mutating func parseArray(depth: Int, from start: Mark) throws(TOMLError) -> Int32 {
        pos += 1
        var elements: [Int32] = []
        while true {
            try skipBlankLines()
            guard !atEnd else {
                throw error("expected a value or ']' to close the array opened on line \(start.line), found the end of the file")
            }
            if bytes[pos] == UInt8(ascii: "]") { break }
            elements.append(try parseValue(depth: depth + 1))
            try skipBlankLines()
            if byte(pos) == UInt8(ascii: ","), pos < end {
                pos += 1
                continue
            }
            guard byte(pos) == UInt8(ascii: "]"), pos < end else {
                let opened = atEnd ? " to close the array opened on line \(start.line)" : " after an array element"
                throw error("expected ',' or ']'\(opened), found \(found(pos))")
            }
            break
        }
        pos += 1
        let array = newContainer(.array, flags: [], span: span(from: start))
        storage.containers[Int(storage.nodes[Int(array)].payload)] = elements
        return array
    }

    /// `{ key = value, ... }` on one line (TOML 1.0), complete once closed.
    private mutating func parseInlineTable(depth: Int, from start: Mark) throws(TOMLError) -> Int32 {
        pos += 1
        let table = newContainer(.table, flags: [], span: SourceSpan(line: start.line, column: start.column))
        skipSpaces()
        if byte(pos) == UInt8(ascii: "}"), pos < end {
            pos += 1
        } else {
            while true {
                skipSpaces()
                if atEnd || byte(pos) == UInt8(ascii: "\n") || byte(pos) == UInt8(ascii: "\r") || byte(pos) == UInt8(ascii: "#") {
                    throw error("expected a key or '}' in the inline table, found \(found(pos)) "
                                + "(an inline table is written on one line; use a [table] for more)")
                }
                try parseKeyValue(in: table, depth: depth)
                skipSpaces()
                if byte(pos) == UInt8(ascii: "}"), pos < end {
                    pos += 1
                    break
                }
                guard byte(pos) == UInt8(ascii: ","), pos < end else {
                    throw error("expected ',' or '}' after a value in the inline table, found \(found(pos))")
                }
                pos += 1
                skipSpaces()
                if byte(pos) == UInt8(ascii: "}"), pos < end {
                    throw error("expected a key after ',', found '}' (an inline table has no comma after its last value)")
                }
            }
        }
        storage.nodes[Int(table)].span = span(from: start)
        storage.nodes[Int(table)].flags = .inline
        return table
    }

    // MARK: - Strings

    private static let quote = UInt8(ascii: "\"")
    private static let apostrophe = UInt8(ascii: "'")
    private static let backslash = UInt8(ascii: "\\")

    /// A control character other than tab is not allowed raw in any string.
    private static func isControl(_ b: UInt8) -> Bool { (b < 0x20 && b != UInt8(ascii: "\t")) || b == 0x7F }

    private func text(_ from: Int, _ to: Int) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[from..<to]), as: UTF8.self)
    }

    /// `"..."` with escapes, on one line.
    private mutating func parseBasicString() throws(TOMLError) -> String {
        pos += 1
        var segment = pos
        var escaped = false
        while true {
            guard pos < end else { throw error("expected '\"' to end the string, found the end of the file") }
            let b = bytes[pos]
            if b == Self.quote { break }
            if b == Self.backslash {
                if !escaped { scratch.removeAll(keepingCapacity: true) }
                escaped = true
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[segment..<pos]))
                try parseEscape(multiLine: false)
                segment = pos
                continue
            }
            if b == UInt8(ascii: "\n") || b == UInt8(ascii: "\r") {
                throw error("expected '\"' to end the string, found the end of the line (a string over several lines is written \"\"\"...\"\"\")")
            }
            if Self.isControl(b) {
                throw error("found \(found(pos)) in a string; write control characters as escapes like \\u001F")
            }
            pos += 1
        }
        defer { pos += 1 }
        guard escaped else { return text(segment, pos) }
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[segment..<pos]))
        return String(decoding: scratch, as: UTF8.self)
    }

    /// `'...'`, exactly as written, on one line.
    private mutating func parseLiteralString() throws(TOMLError) -> String {
        pos += 1
        let first = pos
        while true {
            guard pos < end else { throw error("expected \"'\" to end the string, found the end of the file") }
            let b = bytes[pos]
            if b == Self.apostrophe { break }
            if b == UInt8(ascii: "\n") || b == UInt8(ascii: "\r") {
                throw error("expected \"'\" to end the string, found the end of the line (a string over several lines is written '''...''')")
            }
            if Self.isControl(b) { throw error("found \(found(pos)) in a string; literal strings cannot contain control characters") }
            pos += 1
        }
        defer { pos += 1 }
        return text(first, pos)
    }

    /// `"""..."""` (with escapes) or `'''...'''`: a line break right after the opening
    /// quotes is dropped; up to two quotes may come right before the closing three.
    private mutating func parseMultiLineString() throws(TOMLError) -> String {
        let delimiter = bytes[pos]
        let basic = delimiter == Self.quote
        let opening = position.line
        pos += 3
        _ = try takeLineBreak()
        scratch.removeAll(keepingCapacity: true)
        var segment = pos
        while true {
            guard pos < end else {
                let close = basic ? "\"\"\"" : "'''"
                throw error("expected \(close) to end the multi-line string begun on line \(opening), found the end of the file")
            }
            let b = bytes[pos]
            if b == delimiter {
                var run = 1
                while byte(pos + run) == delimiter && pos + run < end { run += 1 }
                if run < 3 {
                    pos += run
                    continue
                }
                guard run <= 5 else {
                    throw error("found \(run) quotes in a row: a multi-line string ends at the first three, "
                                + "and at most two more may come before them" + (basic ? " (write \\\" for a quote)" : ""),
                                at: pos + 5)
                }
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[segment..<(pos + run - 3)]))
                pos += run
                return String(decoding: scratch, as: UTF8.self)
            }
            if basic && b == Self.backslash {
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[segment..<pos]))
                try parseEscape(multiLine: true)
                segment = pos
                continue
            }
            if b == UInt8(ascii: "\n") || b == UInt8(ascii: "\r") {
                // Line breaks are kept as \n.
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[segment..<pos]))
                _ = try takeLineBreak()
                scratch.append(UInt8(ascii: "\n"))
                segment = pos
                continue
            }
            if Self.isControl(b) {
                throw error("found \(found(pos)) in a string; " + (basic ? "write control characters as escapes like \\u001F"
                                                                    : "literal strings cannot contain control characters"))
            }
            pos += 1
        }
    }

    /// After a backslash in a basic string: appends what it stands for to `scratch`.
    private mutating func parseEscape(multiLine: Bool) throws(TOMLError) {
        let backslash = pos
        pos += 1
        let b = byte(pos)
        let simple: UInt8?
        switch b {
        case UInt8(ascii: "b"): simple = 0x08
        case UInt8(ascii: "t"): simple = 0x09
        case UInt8(ascii: "n"): simple = 0x0A
        case UInt8(ascii: "f"): simple = 0x0C
        case UInt8(ascii: "r"): simple = 0x0D
        case Self.quote: simple = Self.quote
        case Self.backslash: simple = Self.backslash
        default: simple = nil
        }
        if let simple, pos < end {
            scratch.append(simple)
            pos += 1
            return
        }
        if b == UInt8(ascii: "u") || b == UInt8(ascii: "U") {
            let digits = b == UInt8(ascii: "u") ? 4 : 8
            var value: UInt32 = 0
            for k in 1...digits {
                guard let digit = Self.hexValue(byte(pos + k)), pos + k < end else {
                    throw error("expected \(digits) hexadecimal digits after \\\(Character(Unicode.Scalar(b))), found \(found(pos + k))",
                                at: backslash)
                }
                value = value << 4 | UInt32(digit)
            }
            guard let scalar = Unicode.Scalar(value) else {
                let written = text(backslash, pos + digits + 1)
                throw error("\(written) is not a Unicode scalar value (surrogates D800-DFFF and values above 10FFFF are not)",
                            at: backslash)
            }
            scratch.append(contentsOf: String(scalar).utf8)
            pos += digits + 1
            return
        }
        if multiLine && (b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") || b == UInt8(ascii: "\n") || b == UInt8(ascii: "\r")) {
            // A backslash at the end of a line: the line break and the blanks after it vanish.
            skipSpaces()
            guard try takeLineBreak() else {
                throw error("a backslash followed by blanks must end the line (to join lines), found \(found(pos))", at: backslash)
            }
            while true {
                skipSpaces()
                if try !takeLineBreak() { return }
            }
        }
        let shown = pos < end ? "\\" + String(Character(UTF8Check.scalar(at: pos, in: bytes))) : "\\"
        throw error("unknown escape \(shown) (TOML has \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX and \\UXXXXXXXX)", at: backslash)
    }

    private static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    // MARK: - Numbers and dates

    private static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    private func digits(at offset: Int, count: Int) -> Int? {
        var value = 0
        for k in 0..<count {
            let b = byte(offset + k)
            guard offset + k < end, Self.isDigit(b) else { return nil }
            value = value * 10 + Int(b - UInt8(ascii: "0"))
        }
        return value
    }

    private mutating func parseNumberOrDate(from start: Mark) throws(TOMLError) -> Int32 {
        if digits(at: pos, count: 4) != nil && byte(pos + 4) == UInt8(ascii: "-") {
            return try parseDateTime(from: start)
        }
        if digits(at: pos, count: 2) != nil && byte(pos + 2) == UInt8(ascii: ":") {
            let time = try parseTime()
            return dateTime(TOMLDateTime(date: nil, time: time, offsetMinutes: nil), kind: .localTime, from: start)
        }
        let first = pos
        while pos < end {
            let b = bytes[pos]
            guard Self.isBareKeyByte(b) || b == UInt8(ascii: ".") || b == UInt8(ascii: "+") else { break }
            pos += 1
        }
        let token = UnsafeBufferPointer(rebasing: bytes[first..<pos])
        switch Number.parse(token) {
        case .integer(let n):
            return newNode(.integer, span: span(from: start), payload: n)
        case .float(let x):
            return newNode(.float, span: span(from: start), payload: Int64(bitPattern: x.bitPattern))
        case .invalid(let why):
            throw error("invalid number \(text(first, pos)): \(why)", at: first)
        }
    }

    private mutating func dateTime(_ value: TOMLDateTime, kind: TOMLKind, from start: Mark) -> Int32 {
        storage.dateTimes.append(value)
        return newNode(kind, span: span(from: start), payload: Int64(storage.dateTimes.count - 1))
    }

    /// `1979-05-27`, then optionally `T07:32:00` (or a space for the T), then `Z` or `-07:00`.
    private mutating func parseDateTime(from start: Mark) throws(TOMLError) -> Int32 {
        let first = pos
        guard let year = digits(at: pos, count: 4), let month = digits(at: pos + 5, count: 2),
              byte(pos + 7) == UInt8(ascii: "-"), let day = digits(at: pos + 8, count: 2) else {
            throw error("invalid date: expected YYYY-MM-DD like 1979-05-27", at: first)
        }
        guard (1...12).contains(month) else { throw error("invalid date: the month must be 01 to 12, not \(month)", at: first + 5) }
        let days = [31, year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...days[month - 1]).contains(day) else {
            throw error("invalid date: day \(day) is not in month \(month) of \(year)", at: first + 8)
        }
        pos += 10
        var value = TOMLDateTime(date: .init(year: year, month: month, day: day), time: nil, offsetMinutes: nil)
        let separator = byte(pos)
        let hasTime = pos < end && (separator == UInt8(ascii: "T") || separator == UInt8(ascii: "t")
            || (separator == UInt8(ascii: " ") && digits(at: pos + 1, count: 2) != nil && byte(pos + 3) == UInt8(ascii: ":")))
        guard hasTime else { return dateTime(value, kind: .localDate, from: start) }
        pos += 1
        guard digits(at: pos, count: 2) != nil else {
            throw error("expected a time (HH:MM:SS) after the date's T, found \(found(pos))")
        }
        value.time = try parseTime()
        switch byte(pos) {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            pos += 1
            value.offsetMinutes = 0
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign = byte(pos) == UInt8(ascii: "-") ? -1 : 1
            guard let hours = digits(at: pos + 1, count: 2), byte(pos + 3) == UInt8(ascii: ":"),
                  let minutes = digits(at: pos + 4, count: 2) else {
                throw error("invalid offset: expected Z or ±HH:MM like -07:00 after the time")
            }
            guard hours <= 23, minutes <= 59 else { throw error("invalid offset: hours 00 to 23 and minutes 00 to 59") }
            pos += 6
            value.offsetMinutes = sign * (hours * 60 + minutes)
        default:
            break
        }
        return dateTime(value, kind: value.offsetMinutes == nil ? .localDateTime : .offsetDateTime, from: start)
    }

    /// `07:32:00` with an optional fraction `.999999`.
    private mutating func parseTime() throws(TOMLError) -> TOMLDateTime.Time {
        let first = pos
        guard let hour = digits(at: pos, count: 2), byte(pos + 2) == UInt8(ascii: ":"),
              let minute = digits(at: pos + 3, count: 2) else {
            throw error("invalid time: expected HH:MM:SS like 07:32:00", at: first)
        }
        guard byte(pos + 5) == UInt8(ascii: ":"), let second = digits(at: pos + 6, count: 2) else {
            throw error("invalid time: expected seconds, as in HH:MM:SS (07:32:00)", at: first)
        }
        guard hour <= 23 else { throw error("invalid time: the hour must be 00 to 23, not \(hour)", at: first) }
        guard minute <= 59 else { throw error("invalid time: the minute must be 00 to 59, not \(minute)", at: first + 3) }
        // 60: a leap second (RFC 3339).
        guard second <= 60 else { throw error("invalid time: the second must be 00 to 60, not \(second)", at: first + 6) }
        pos += 8
        var nanosecond = 0
        if byte(pos) == UInt8(ascii: "."), pos < end {
            pos += 1
            guard Self.isDigit(byte(pos)), pos < end else {
                throw error("invalid time: expected digits after the decimal point, found \(found(pos))")
            }
            var scale = 100_000_000
            while pos < end && Self.isDigit(bytes[pos]) {
                nanosecond += Int(bytes[pos] - UInt8(ascii: "0")) * scale
                scale /= 10
                pos += 1
            }
        }
        return TOMLDateTime.Time(hour: hour, minute: minute, second: second, nanosecond: nanosecond)
    }
}

/// Integers and floats, checked against TOML's grammar before they are converted.
enum Number {
    enum Result {
        case integer(Int64)
        case float(Double)
        case invalid(String)
    }

    static func parse(_ token: UnsafeBufferPointer<UInt8>) -> Result {
        var i = 0
        var negative = false
        let n = token.count
        if n > 0 && (token[0] == UInt8(ascii: "+") || token[0] == UInt8(ascii: "-")) {
            negative = token[0] == UInt8(ascii: "-")
            i = 1
        }
        let signed = i == 1
        if n - i == 3 && token[i] == UInt8(ascii: "i") && token[i + 1] == UInt8(ascii: "n") && token[i + 2] == UInt8(ascii: "f") {
            return .float(negative ? -.infinity : .infinity)
        }
        if n - i == 3 && token[i] == UInt8(ascii: "n") && token[i + 1] == UInt8(ascii: "a") && token[i + 2] == UInt8(ascii: "n") {
            return .float(negative ? -.nan : .nan)
        }
        guard i < n else { return .invalid("expected digits after the sign") }
        if token[i] == UInt8(ascii: "0") && i + 1 < n {
            let radix: UInt64
            switch token[i + 1] {
            case UInt8(ascii: "x"): radix = 16
            case UInt8(ascii: "o"): radix = 8
            case UInt8(ascii: "b"): radix = 2
            default: radix = 0
            }
            if radix != 0 {
                guard !signed else { return .invalid("hexadecimal, octal and binary integers take no sign") }
                return integer(token, from: i + 2, radix: radix, negative: false)
            }
        }
        // Decimal: an integer part, then a fraction, an exponent or both for a float.
        var j = i
        guard case .ok(let intEnd) = digitRun(token, from: j, radix: 10) else {
            return .invalid("expected a digit" + (j < n ? ", found '\(Character(Unicode.Scalar(token[j])))'" : ""))
        }
        if token[j] == UInt8(ascii: "0") && intEnd - j > 1 { return .invalid("leading zeros are not allowed") }
        j = intEnd
        var isFloat = false
        if j < n && token[j] == UInt8(ascii: ".") {
            isFloat = true
            guard case .ok(let fractionEnd) = digitRun(token, from: j + 1, radix: 10) else {
                return .invalid("expected digits after the decimal point")
            }
            j = fractionEnd
        }
        if j < n && (token[j] == UInt8(ascii: "e") || token[j] == UInt8(ascii: "E")) {
            isFloat = true
            j += 1
            if j < n && (token[j] == UInt8(ascii: "+") || token[j] == UInt8(ascii: "-")) { j += 1 }
            guard case .ok(let exponentEnd) = digitRun(token, from: j, radix: 10) else {
                return .invalid("expected digits in the exponent")
            }
            j = exponentEnd
        }
        guard j == n else {
            let c = token[j]
            if c == UInt8(ascii: "_") { return .invalid("'_' must stand between two digits") }
            return .invalid("unexpected '\(Character(Unicode.Scalar(c)))'")
        }
        guard isFloat else { return integer(token, from: i, radix: 10, negative: negative) }
        var plain = ""
        plain.reserveCapacity(n)
        for b in token where b != UInt8(ascii: "_") { plain.unicodeScalars.append(Unicode.Scalar(b)) }
        guard let value = Double(plain), value.isFinite else {
            return .invalid("out of range for a 64-bit floating-point number")
        }
        return .float(value)
    }

    private enum Run {
        case ok(Int)
        case invalid
    }

    /// Digits with single `_` between them, from `start`; where they end.
    private static func digitRun(_ token: UnsafeBufferPointer<UInt8>, from start: Int, radix: UInt64) -> Run {
        var j = start
        var previousWasDigit = false
        while j < token.count {
            let b = token[j]
            if b == UInt8(ascii: "_") {
                guard previousWasDigit, j + 1 < token.count, digitValue(token[j + 1], radix: radix) != nil else { return .invalid }
                previousWasDigit = false
            } else if digitValue(b, radix: radix) != nil {
                previousWasDigit = true
            } else {
                break
            }
            j += 1
        }
        return j > start ? .ok(j) : .invalid
    }

    private static func digitValue(_ b: UInt8, radix: UInt64) -> UInt64? {
        let value: UInt64
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt64(b - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): value = UInt64(b - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): value = UInt64(b - UInt8(ascii: "A") + 10)
        default: return nil
        }
        return value < radix ? value : nil
    }

    private static func integer(_ token: UnsafeBufferPointer<UInt8>, from start: Int, radix: UInt64, negative: Bool) -> Result {
        guard case .ok(let end) = digitRun(token, from: start, radix: radix) else {
            return .invalid(start < token.count && token[start] == UInt8(ascii: "_") ? "'_' must stand between two digits"
                            : "expected \(radix == 16 ? "hexadecimal" : radix == 8 ? "octal" : radix == 2 ? "binary" : "decimal") digits")
        }
        guard end == token.count else {
            return .invalid(token[end] == UInt8(ascii: "_") ? "'_' must stand between two digits"
                            : "unexpected '\(Character(Unicode.Scalar(token[end])))'")
        }
        let limit: UInt64 = negative ? UInt64(Int64.max) + 1 : UInt64(Int64.max)
        var magnitude: UInt64 = 0
        for b in token[start..<end] where b != UInt8(ascii: "_") {
            let (shifted, o1) = magnitude.multipliedReportingOverflow(by: radix)
            let (sum, o2) = shifted.addingReportingOverflow(digitValue(b, radix: radix)!)
            guard !o1, !o2, sum <= limit else {
                return .invalid("out of range for a 64-bit integer (-9223372036854775808 to 9223372036854775807)")
            }
            magnitude = sum
        }
        return .integer(negative ? Int64(truncatingIfNeeded: 0 &- magnitude) : Int64(magnitude))
    }
}

