/// Where something is written: 1-based line and column, counted in Unicode scalars, and how
/// many scalars it covers on that line (1 when it runs on over several lines).
public struct SourceSpan: Hashable, Sendable, Comparable {
    public var line: Int
    public var column: Int
    public var length: Int

    public init(line: Int, column: Int, length: Int = 1) {
        self.line = line
        self.column = column
        self.length = max(1, length)
    }

    public static func < (a: SourceSpan, b: SourceSpan) -> Bool { (a.line, a.column) < (b.line, b.column) }
}

/// The type of a TOML value.
public enum TOMLKind: UInt8, Sendable {
    case table, array, string, integer, float, boolean, offsetDateTime, localDateTime, localDate, localTime

    /// "a table", "an integer": how messages name a found value.
    public var withArticle: String {
        switch self {
        case .table: return "a table"
        case .array: return "an array"
        case .string: return "a string"
        case .integer: return "an integer"
        case .float: return "a floating-point number"
        case .boolean: return "a boolean"
        case .offsetDateTime: return "a date-time"
        case .localDateTime: return "a local date-time"
        case .localDate: return "a date"
        case .localTime: return "a time"
        }
    }
}

/// How far a document may go. Exceeding one is an error at the place it happens, never a crash.
public struct TOMLLimits: Sendable {
    /// Bytes of text.
    public var maxBytes: Int
    /// Levels of tables and arrays below the root, counting each part of a dotted key or header.
    public var maxDepth: Int

    public init(maxBytes: Int = 4 << 20, maxDepth: Int = 128) {
        self.maxBytes = maxBytes
        self.maxDepth = maxDepth
    }

    public static let standard = TOMLLimits()
}

/// Why a text is not TOML, and where.
public struct TOMLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// nil for a problem with the text as a whole (too large).
    public var span: SourceSpan?
    public var message: String

    public init(span: SourceSpan?, message: String) {
        self.span = span
        self.message = message
    }

    public var description: String {
        span.map { "\($0.line):\($0.column): \(message)" } ?? message
    }
}

/// A parsed document: every table, key and value with the span it was written at.
///
/// Stored flat: values are numbered nodes in one array and containers list their children
/// by number, so memory is proportional to the text, copying a document is free and
/// freeing one never recurses.
public final class TOMLDocument: Sendable {
    let storage: Storage

    init(storage: Storage) {
        self.storage = storage
    }

    /// The top-level table.
    public var root: TOMLValue { TOMLValue(document: self, index: 0) }

    func value(_ index: Int32) -> TOMLValue { TOMLValue(document: self, index: index) }

    /// Parses UTF-8 bytes, checking the encoding.
    /// `pause` is called between statements: a caller on a background thread lets others run there.
    public static func parse(utf8 bytes: [UInt8], limits: TOMLLimits = .standard,
                             pause: () -> Void = {}) throws(TOMLError) -> TOMLDocument {
        try bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(TOMLError) in try parse(buffer, validated: false, limits: limits, pause: pause) }
        }.get()
    }

    public static func parse(_ text: String, limits: TOMLLimits = .standard) throws(TOMLError) -> TOMLDocument {
        var text = text
        return try text.withUTF8 { buffer in
            Result { () throws(TOMLError) in try parse(buffer, validated: true, limits: limits) }
        }.get()
    }

    static func parse(_ buffer: UnsafeBufferPointer<UInt8>, validated: Bool,
                      limits: TOMLLimits, pause: () -> Void = {}) throws(TOMLError) -> TOMLDocument {
        guard buffer.count <= limits.maxBytes else {
            throw TOMLError(span: nil, message: "the file has \(buffer.count) bytes; a configuration file may have at most "
                            + "\(limits.maxBytes) (\(limits.maxBytes >> 20) MiB)")
        }
        if !validated, let bad = UTF8Check.firstInvalidByte(buffer) {
            var lines = LinePosition(buffer)
            throw TOMLError(span: lines.span(at: bad), message: "invalid UTF-8 (byte 0x\(String(buffer[bad], radix: 16, uppercase: true))); "
                            + "configuration files are UTF-8 text")
        }
        var parser = Parser(buffer, limits: limits)
        try parser.parseDocument(pause: pause)
        return TOMLDocument(storage: parser.storage)
    }
}

/// One value of a document: a cheap handle (the document, a node number and a copy of the
/// node, so reading a value's type, place or scalar touches nothing shared).
public struct TOMLValue: Sendable {
    public let document: TOMLDocument
    let index: Int32
    private let node: Node

    init(document: TOMLDocument, index: Int32) {
        self.document = document
        self.index = index
        node = document.storage.nodes[Int(index)]
    }

    public var kind: TOMLKind { node.kind }

    /// Where the value is written: a table's `[header]` (its first mention for one that only
    /// has keys under it), an inline table's or an array's brackets, a scalar's text.
    public var span: SourceSpan { node.span }

    /// The key that names this value in its table; nil for array elements and the root.
    public var key: String? { node.key >= 0 ? document.storage.keys[Int(node.key)].name : nil }

    /// Where that key is written (for a `[header]`, its last key).
    public var keySpan: SourceSpan? { node.key >= 0 ? document.storage.keys[Int(node.key)].span : nil }

    public var string: String? { kind == .string ? document.storage.strings[Int(node.payload)] : nil }
    public var integer: Int64? { kind == .integer ? node.payload : nil }
    public var float: Double? { kind == .float ? Double(bitPattern: UInt64(bitPattern: node.payload)) : nil }
    public var bool: Bool? { kind == .boolean ? node.payload != 0 : nil }

    public var dateTime: TOMLDateTime? {
        switch kind {
        case .offsetDateTime, .localDateTime, .localDate, .localTime: return document.storage.dateTimes[Int(node.payload)]
        default: return nil
        }
    }

    public var isTable: Bool { kind == .table }
    public var isArray: Bool { kind == .array }

    private var children: [Int32] {
        kind == .table || kind == .array ? document.storage.containers[Int(node.payload)] : []
    }

    /// A table's value for `key`.
    public subscript(key: String) -> TOMLValue? {
        guard kind == .table, let child = document.storage.child(of: index, named: key) else { return nil }
        return document.value(child)
    }

    /// A table's keys, in the order they were written.
    public var keys: [String] { children.map { document.storage.keys[Int(document.storage.nodes[Int($0)].key)].name } }

    /// A table's values whose keys are not among `known`, in the order they were written;
    /// reads no other value (for checking a table against a schema).
    public func entries(notIn known: [String]) -> [TOMLValue] {
        guard kind == .table else { return [] }
        let storage = document.storage
        return children.filter { !known.contains(storage.keys[Int(storage.nodes[Int($0)].key)].name) }.map(document.value)
    }

    /// A table's values (each knows its key), in the order they were written.
    public var entries: [TOMLValue] { kind == .table ? children.map(document.value) : [] }

    /// An array's elements.
    public var elements: [TOMLValue] { kind == .array ? children.map(document.value) : [] }

    /// Entries of a table, elements of an array, 0 for anything else.
    public var count: Int { children.count }

    /// Element `i` of an array.
    public func element(_ i: Int) -> TOMLValue? {
        let all = children
        guard kind == .array, all.indices.contains(i) else { return nil }
        return document.value(all[i])
    }
}

/// A date, a time or both, with or without an offset from UTC, as written.
public struct TOMLDateTime: Hashable, Sendable, CustomStringConvertible {
    public struct Date: Hashable, Sendable {
        public var year: Int, month: Int, day: Int

        public init(year: Int, month: Int, day: Int) {
            self.year = year
            self.month = month
            self.day = day
        }
    }

    public struct Time: Hashable, Sendable {
        public var hour: Int, minute: Int, second: Int
        /// The fraction of a second, truncated to nanoseconds.
        public var nanosecond: Int

        public init(hour: Int, minute: Int, second: Int, nanosecond: Int) {
            self.hour = hour
            self.minute = minute
            self.second = second
            self.nanosecond = nanosecond
        }
    }

    public var date: Date?
    public var time: Time?
    /// Minutes east of UTC; nil for local date-times.
    public var offsetMinutes: Int?

    public init(date: Date?, time: Time?, offsetMinutes: Int?) {
        self.date = date
        self.time = time
        self.offsetMinutes = offsetMinutes
    }

    /// RFC 3339: `1979-05-27T07:32:00.5-07:00`, `1979-05-27`, `07:32:00`.
    public var description: String {
        var text = ""
        if let date {
            text += pad(date.year, 4) + "-" + pad(date.month, 2) + "-" + pad(date.day, 2)
        }
        if let time {
            if date != nil { text += "T" }
            text += pad(time.hour, 2) + ":" + pad(time.minute, 2) + ":" + pad(time.second, 2)
            if time.nanosecond > 0 {
                var fraction = pad(time.nanosecond, 9)
                while fraction.hasSuffix("0") { fraction.removeLast() }
                text += "." + fraction
            }
        }
        if let offset = offsetMinutes {
            text += offset == 0 ? "Z" : (offset < 0 ? "-" : "+") + pad(abs(offset) / 60, 2) + ":" + pad(abs(offset) % 60, 2)
        }
        return text
    }

    private func pad(_ n: Int, _ width: Int) -> String {
        let digits = String(n)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

// MARK: - Storage

struct Node {
    var kind: TOMLKind
    var flags: NodeFlags = []
    /// Index in `Storage.keys`, or -1.
    var key: Int32 = -1
    var line: UInt32
    var column: UInt32
    var length: UInt32
    /// The integer, the float's bits, the boolean, or an index into strings, dateTimes or containers.
    var payload: Int64 = 0

    var span: SourceSpan {
        get { SourceSpan(line: Int(line), column: Int(column), length: Int(length)) }
        set {
            line = UInt32(clamping: newValue.line)
            column = UInt32(clamping: newValue.column)
            length = UInt32(clamping: newValue.length)
        }
    }
}

/// How a table or array came to be; TOML's rules on defining a table twice depend on it.
struct NodeFlags: OptionSet {
    let rawValue: UInt8
    /// A table defined by its own `[header]`, or an element of `[[header]]`.
    static let header = NodeFlags(rawValue: 1)
    /// A table made by a dotted key (`a.b = 1` makes `a`).
    static let dotted = NodeFlags(rawValue: 2)
    /// An inline table, complete once its `}` is read.
    static let inline = NodeFlags(rawValue: 4)
    /// An array made by `[[header]]`, which later headers may append to.
    static let tableArray = NodeFlags(rawValue: 8)
}

struct Key {
    var name: String
    var span: SourceSpan
}

struct TableKey: Hashable {
    var table: Int32
    var name: String
}

struct Storage: Sendable {
    var nodes: [Node] = []
    var keys: [Key] = []
    var strings: [String] = []
    var dateTimes: [TOMLDateTime] = []
    /// Children of each table and array, in order.
    var containers: [[Int32]] = []
    /// The children of tables with more than `scanLimit` keys, by table and key.
    var lookup: [TableKey: Int32] = [:]

    /// Up to this many keys a table is searched by comparing them in turn: cheaper than
    /// hashing, and it keeps the hash table to the few large tables.
    static let scanLimit = 8

    func child(of table: Int32, named name: String) -> Int32? {
        let children = containers[Int(nodes[Int(table)].payload)]
        guard children.count <= Self.scanLimit else { return lookup[TableKey(table: table, name: name)] }
        for child in children where keys[Int(nodes[Int(child)].key)].name == name { return child }
        return nil
    }
}

extension Node: Sendable {}
extension NodeFlags: Sendable {}
extension Key: Sendable {}
extension TableKey: Sendable {}
