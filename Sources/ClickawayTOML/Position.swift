/// Line and column of byte offsets in a text, for offsets that mostly increase: columns are
/// counted on from the last one asked for, so a whole parse costs one pass over each line.
struct LinePosition {
    let bytes: UnsafeBufferPointer<UInt8>
    private(set) var line = 1
    /// Byte offset where `line` starts.
    private(set) var lineStart = 0
    private var cachedOffset = 0
    private var cachedColumn = 1

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// A line break ends at `offset` (the byte after the `\n`).
    mutating func newLine(startingAt offset: Int) {
        line += 1
        lineStart = offset
        cachedOffset = offset
        cachedColumn = 1
    }

    /// Line 1 starts after a byte order mark, which editors do not show.
    mutating func skipFirst(_ n: Int) {
        lineStart = n
        cachedOffset = n
    }

    /// The column of `offset`, which must lie on the current line: Unicode scalars since
    /// the line's start, plus one.
    mutating func column(at offset: Int) -> Int {
        if offset < cachedOffset {
            cachedOffset = lineStart
            cachedColumn = 1
        }
        var column = cachedColumn
        var i = cachedOffset
        while i < offset {
            // Every byte but a UTF-8 continuation byte starts a scalar.
            if bytes[i] & 0xC0 != 0x80 { column += 1 }
            i += 1
        }
        cachedOffset = offset
        cachedColumn = column
        return column
    }

    /// The span of the single character at `offset`, found by counting lines from the start
    /// (for errors found before parsing, like bad UTF-8).
    mutating func span(at offset: Int) -> SourceSpan {
        var i = lineStart
        while i < offset {
            if bytes[i] == UInt8(ascii: "\n") { newLine(startingAt: i + 1) }
            i += 1
        }
        return SourceSpan(line: line, column: column(at: offset))
    }
}

/// UTF-8 well-formedness (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
enum UTF8Check {
    /// The offset of the first byte that is not part of well-formed UTF-8, or nil.
    static func firstInvalidByte(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var i = 0
        let n = bytes.count
        while i < n {
            let lead = bytes[i]
            if lead < 0x80 {
                i += 1
                continue
            }
            let length: Int
            var low: UInt8 = 0x80, high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; high = 0x9F
            case 0xF0: length = 4; low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; high = 0x8F
            default: return i
            }
            guard i + length <= n else { return i }
            let second = bytes[i + 1]
            guard second >= low && second <= high else { return i }
            for k in 2..<max(2, length) where bytes[i + k] & 0xC0 != 0x80 { return i }
            i += length
        }
        return nil
    }

    /// The scalar starting at `offset` of well-formed UTF-8.
    static func scalar(at offset: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Unicode.Scalar {
        let lead = UInt32(bytes[offset])
        let length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4
        guard offset + length <= bytes.count else { return "\u{FFFD}" }
        var value = length == 1 ? lead : lead & (0x7F >> UInt32(length))
        for k in 1..<max(1, length) {
            value = value << 6 | UInt32(bytes[offset + k] & 0x3F)
        }
        return Unicode.Scalar(value) ?? "\u{FFFD}"
    }
}
