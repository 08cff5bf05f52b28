/// A JSON value whose objects keep their key order, so the documented output shapes
/// (`hit --json`, the control protocol) print exactly as written down.
public enum JSON: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    /// A number with a fraction or an exponent (sway's tree has some; the protocol none).
    case number(Double)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    public static func == (a: JSON, b: JSON) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.string(let x), .string(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    public subscript(key: String) -> JSON? {
        if case .object(let pairs) = self { return pairs.first { $0.0 == key }?.1 }
        return nil
    }

    public var isNull: Bool { self == .null }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var intValue: Int64? {
        if case .int(let i) = self { return i }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    public var arrayValue: [JSON]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// Compact, one line: the control protocol is one JSON object per line. Written as UTF-8
    /// bytes and made a string once: a status reply with thousands of popups open was
    /// thousands of small appends to a string, each a look at its storage.
    public var text: String {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private func write(to out: inout [UInt8]) {
        switch self {
        case .null: out += "null".utf8
        case .bool(let b): out += (b ? "true" : "false").utf8
        case .int(let i): out += String(i).utf8
        case .number(let d): out += "\(d)".utf8
        case .string(let s): JSON.quote(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let pairs):
            out.append(UInt8(ascii: "{"))
            for (i, (k, v)) in pairs.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSON.quote(k, into: &out)
                out.append(UInt8(ascii: ":"))
                v.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func quote(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings (names, window ids, rectangles) need no escape: appended whole, not a
        // scalar at a time. UTF-8's multi-byte sequences hold no byte below 0x80.
        if s.utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            out += s.utf8
            out.append(UInt8(ascii: "\""))
            return
        }
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\"".utf8
            case "\\": out += "\\\\".utf8
            case "\n": out += "\\n".utf8
            case "\r": out += "\\r".utf8
            case "\t": out += "\\t".utf8
            case _ where scalar.value < 0x20:
                out += ("\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)).utf8
            default: out += String(scalar).utf8
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    public struct ParseError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Parses one JSON text. Integers are `.int`, other numbers `.number`; nesting is
    /// limited, so a hostile request cannot exhaust the stack.
    public static func parse(_ text: String) throws(ParseError) -> JSON {
        var parser = Parser(bytes: Array(text.utf8))
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.at == parser.bytes.count else { throw parser.error("unexpected text after the JSON value") }
        return value
    }
}

private struct Parser {
    let bytes: [UInt8]
    var at = 0
    static let maxDepth = 32

    func error(_ what: String) -> JSON.ParseError { JSON.ParseError(description: "\(what) at byte \(at)") }

    mutating func skipSpace() {
        while at < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[at]) { at += 1 }
    }

    mutating func expect(_ word: String) throws(JSON.ParseError) {
        for b in word.utf8 {
            guard at < bytes.count, bytes[at] == b else { throw error("expected \(word)") }
            at += 1
        }
    }

    mutating func value(depth: Int) throws(JSON.ParseError) -> JSON {
        guard depth < Self.maxDepth else { throw error("nested too deeply") }
        skipSpace()
        guard at < bytes.count else { throw error("unexpected end of input") }
        switch bytes[at] {
        case UInt8(ascii: "{"):
            at += 1
            var pairs: [(String, JSON)] = []
            skipSpace()
            if at < bytes.count, bytes[at] == UInt8(ascii: "}") { at += 1; return .object(pairs) }
            while true {
                skipSpace()
                let key = try string()
                skipSpace()
                try expect(":")
                pairs.append((key, try value(depth: depth + 1)))
                skipSpace()
                guard at < bytes.count else { throw error("unterminated object") }
                if bytes[at] == UInt8(ascii: ",") { at += 1; continue }
                try expect("}")
                return .object(pairs)
            }
        case UInt8(ascii: "["):
            at += 1
            var items: [JSON] = []
            skipSpace()
            if at < bytes.count, bytes[at] == UInt8(ascii: "]") { at += 1; return .array(items) }
            while true {
                items.append(try value(depth: depth + 1))
                skipSpace()
                guard at < bytes.count else { throw error("unterminated array") }
                if bytes[at] == UInt8(ascii: ",") { at += 1; continue }
                try expect("]")
                return .array(items)
            }
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "n"): try expect("null"); return .null
        default: return try number()
        }
    }

    mutating func number() throws(JSON.ParseError) -> JSON {
        let start = at
        if at < bytes.count, bytes[at] == UInt8(ascii: "-") { at += 1 }
        skipDigits()
        var fractional = false
        if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
            fractional = true
            at += 1
            skipDigits()
        }
        if at < bytes.count, bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") {
            fractional = true
            at += 1
            if at < bytes.count, bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-") { at += 1 }
            skipDigits()
        }
        let text = String(decoding: bytes[start..<at], as: UTF8.self)
        if !fractional, let n = Int64(text) { return .int(n) }
        guard at > start, let d = Double(text), d.isFinite else { throw error("expected a value") }
        return .number(d)
    }

    private mutating func skipDigits() {
        while at < bytes.count, bytes[at] >= 0x30, bytes[at] <= 0x39 { at += 1 }
    }

    mutating func string() throws(JSON.ParseError) -> String {
        try expect("\"")
        var scalars = String.UnicodeScalarView()
        var raw: [UInt8] = []
        func flush() {
            scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars)
            raw.removeAll()
        }
        while at < bytes.count {
            let b = bytes[at]
            at += 1
            switch b {
            case UInt8(ascii: "\""):
                flush()
                return String(scalars)
            case UInt8(ascii: "\\"):
                guard at < bytes.count else { throw error("unterminated string") }
                let e = bytes[at]
                at += 1
                let simple: [UInt8: UInt8] = [0x22: 0x22, 0x5C: 0x5C, 0x2F: 0x2F, 0x62: 0x08, 0x66: 0x0C, 0x6E: 0x0A, 0x72: 0x0D, 0x74: 0x09]
                if let c = simple[e] {
                    raw.append(c)
                } else if e == UInt8(ascii: "u") {
                    guard at + 4 <= bytes.count, let v = UInt32(String(decoding: bytes[at..<at + 4], as: UTF8.self), radix: 16)
                    else { throw error("bad \\u escape") }
                    at += 4
                    flush()
                    scalars.append(Unicode.Scalar(v) ?? "\u{FFFD}")
                } else {
                    throw error("bad escape")
                }
            case 0..<0x20:
                throw error("control character in string")
            default:
                raw.append(b)
            }
        }
        throw error("unterminated string")
    }
}
